package serve

import (
	"embed"
	"net/http"
	"path"
)

// web holds the page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed web
var web embed.FS

// assetTypes are the files the page is made of, by extension; nothing
// else is served.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// handleAsset is GET / (the page) and GET /assets/NAME.
func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" {
		name = "index.html"
	}
	typ, ok := assetTypes[path.Ext(name)]
	data, err := web.ReadFile("web/" + name)
	if !ok || err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(data)
}
