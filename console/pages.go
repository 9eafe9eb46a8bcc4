package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/acemq-go/acemq/transport"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// pages are the templates, each page with the layout and the parts
// (_name.html) pages share.
var pages = func() map[string]*template.Template {
	funcs := template.FuncMap{"age": age, "rate": func(r float64) string { return strconv.FormatFloat(r, 'f', 1, 64) + "/s" }}
	out := map[string]*template.Template{}
	names, _ := fs.Glob(templateFiles, "templates/*.html")
	for _, n := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if page == "layout" || strings.HasPrefix(page, "_") { // _name: a part of pages
			continue
		}
		out[page] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/_*.html", n))
	}
	return out
}()

// defaultLimit is how many messages a queue page shows.
const defaultLimit = 50

func (s *Server) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /queue", s.queue)
	mux.HandleFunc("POST /confirm", s.confirm)
	mux.HandleFunc("POST /import", s.importUpload)
	mux.HandleFunc("POST /run", s.run)
	mux.HandleFunc("GET /job", s.jobPage)
	mux.HandleFunc("GET /job.json", s.jobJSON)
	mux.HandleFunc("GET /job/download", s.jobDownload)
	mux.HandleFunc("GET /drift", s.drift)
	mux.HandleFunc("POST /drift", s.drift)
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /jobs", s.history)
	mux.HandleFunc("GET /consumers", s.consumers)
	mux.HandleFunc("POST /consumers", s.controlConsumer)
	s.editRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, "Not found", "There is no page "+r.URL.Path+".")
	})
	s.mux = mux
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.secure(s.bounded(s.mux)).ServeHTTP(w, r)
}

// view is what every page's layout needs.
type view struct {
	Title    string
	Broker   string // the endpoint, never with its password
	ReadOnly bool
	CSRF     string // the caller's token, for the forms
	Who      string // the caller, as the audit log names them
	SignedIn bool   // the caller has a session to sign out of
	Services bool   // the console is told of services: the Consumers page is linked
	Data     any
}

func (s *Server) render(w http.ResponseWriter, status int, page, title string, data any) {
	var b strings.Builder
	c := callerOfWriter(w)
	err := pages[page].Execute(&b, view{Title: title, Broker: s.c.Endpoint.String(), ReadOnly: s.c.ReadOnly,
		CSRF: c.csrf, Who: c.Who, SignedIn: c.session != "", Services: len(s.c.Services) > 0, Data: data})
	if err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}

// fail renders the error page with status.
func (s *Server) fail(w http.ResponseWriter, _ *http.Request, status int, title, message string) {
	s.render(w, status, "error", title, struct {
		Status  int
		Message string
	}{status, message})
}

// failErr renders err: an unknown queue is a 404, a broker that does not
// answer a 502.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, what string, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		s.brokerSilent(w, r, what+": the broker did not answer in time")
		return
	}
	status := http.StatusBadGateway
	if errors.Is(err, transport.ErrNotFound) {
		status = http.StatusNotFound
	}
	s.fail(w, r, status, what, err.Error())
}
