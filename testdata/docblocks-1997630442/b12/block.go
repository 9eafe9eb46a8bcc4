package docblock

import "github.com/acemq-go/acemq"
import "context"
import "errors"


//line /work/wt/pc/docs/interceptors.md:8
var url string
//line /work/wt/pc/docs/interceptors.md:9
type tenantKey struct{}
//line /work/wt/pc/docs/interceptors.md:10
func suspended(tenant any) bool { panic(0) }


var (
	ctx  = context.Background()
	conn *acemq.Conn
)

func _() error {
//line /work/wt/pc/docs/interceptors.md:14
conn, err := acemq.Connect(ctx, url,
//line /work/wt/pc/docs/interceptors.md:15
	acemq.WithPublishInterceptors(func(ctx context.Context, m *acemq.Intercepted) error {
//line /work/wt/pc/docs/interceptors.md:16
		tenant, ok := ctx.Value(tenantKey{}).(string)
//line /work/wt/pc/docs/interceptors.md:17
		if !ok {
//line /work/wt/pc/docs/interceptors.md:18
			return errors.New("no tenant") // Publish fails: nothing is sent
//line /work/wt/pc/docs/interceptors.md:19
		}
//line /work/wt/pc/docs/interceptors.md:20
		m.Headers["tenant"] = tenant
//line /work/wt/pc/docs/interceptors.md:21
		return nil
//line /work/wt/pc/docs/interceptors.md:22
	}),
//line /work/wt/pc/docs/interceptors.md:23
	acemq.WithConsumeInterceptors(func(ctx context.Context, m *acemq.Intercepted) error {
//line /work/wt/pc/docs/interceptors.md:24
		if suspended(m.Headers["tenant"]) {
//line /work/wt/pc/docs/interceptors.md:25
			return acemq.Fatal(errors.New("tenant suspended")) // Q.dlq at once
//line /work/wt/pc/docs/interceptors.md:26
		}
//line /work/wt/pc/docs/interceptors.md:27
		return nil
//line /work/wt/pc/docs/interceptors.md:28
	}))
_ = conn
_ = err
return nil
}
