package docblock

import "github.com/acemq-go/acemq"
import "context"




var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/connecting.md:42
conn, err := acemq.Connect(ctx, "amqps://guest:guest@localhost:5671/",
//line /work/wt/pc/docs/connecting.md:43
	acemq.WithCA("acemq-dev-certs/ca_certificate.pem"),
//line /work/wt/pc/docs/connecting.md:44
	acemq.WithClientCertificate("acemq-dev-certs/client_certificate.pem", "acemq-dev-certs/client_key.pem"),
//line /work/wt/pc/docs/connecting.md:45
	acemq.WithDevelopmentCertificates()) // local work only
_ = conn
_ = err
return nil
}
