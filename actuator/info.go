package actuator

import (
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// info is what /acemq-info serves: the library, version and transport do
// not change while the process runs, so they are read once; the
// capabilities grow as the service uses them, so each answer reads them.
type info struct {
	library, version, transport string
	capabilities                []contract.Capability
}

// infoHandler serves conn's info.
type infoHandler struct {
	info
	conn *acemq.Conn
}

func newInfoHandler(conn *acemq.Conn) infoHandler {
	return infoHandler{info{library: contract.Library, version: moduleVersion(), transport: transportName(conn)}, conn}
}

func (i info) MarshalJSON() ([]byte, error) {
	return object{
		{contract.InfoFieldLibrary, i.library},
		{contract.InfoFieldVersion, i.version},
		{contract.InfoFieldTransport, i.transport},
		{contract.InfoFieldCapabilities, i.capabilities},
	}.MarshalJSON()
}

func (h infoHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	i := h.info
	i.capabilities = h.conn.Capabilities()
	writeJSON(w, http.StatusOK, i)
}

// moduleVersion is the version of this module the build recorded: the main
// module's when it is this one (the acemq CLI), else the dependency's (a
// service), the replacement's when replaced; VersionDevel when it recorded
// none ("(devel)" from a checkout, or a replacement by a directory).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return contract.VersionDevel
	}
	v := ""
	if bi.Main.Path == contract.Library {
		v = bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == contract.Library {
			v = m.Version
			if m.Replace != nil {
				v = m.Replace.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return contract.VersionDevel
	}
	return v
}

// transportName says which broker conn speaks to: RabbitMQ over AMQP, the
// in-process broker (whose String is memory://NAME, or "memory broker"), or
// a transport of the application's own. Which driver it is is the SPI's to
// say: this is the one place the actuator needs Conn.Transport.
func transportName(conn *acemq.Conn) string {
	t := conn.Transport()
	if _, ok := t.(*rabbitmq.Transport); ok {
		return contract.TransportAMQP
	}
	if strings.HasPrefix(t.String(), contract.TransportMemory) {
		return contract.TransportMemory
	}
	return contract.TransportOther
}
