package docblock

import "github.com/acemq-go/acemq"
import "context"
import "log/slog"




var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/connecting.md:4
conn, err := acemq.Connect(ctx, "amqps://svc@rabbit.internal:5671/orders",
//line /work/wt/pc/docs/connecting.md:5
	acemq.WithCA("/etc/acemq/ca.pem"),
//line /work/wt/pc/docs/connecting.md:6
	acemq.WithClientCertificate("/etc/acemq/client.pem", "/etc/acemq/client.key"),
//line /work/wt/pc/docs/connecting.md:7
	acemq.WithCredentials(acemq.CredentialsFromFiles("/run/secrets/rabbit-user", "/run/secrets/rabbit-pass")),
//line /work/wt/pc/docs/connecting.md:8
	acemq.WithConnectionName("checkout"),
//line /work/wt/pc/docs/connecting.md:9
	acemq.WithLogger(slog.Default()))
_ = conn
_ = err
return nil
}
