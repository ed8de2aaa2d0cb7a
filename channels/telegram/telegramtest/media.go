package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
)

// MaxDownload is the largest file a bot may download from the Bot API (20 MB): getFile
// refuses bigger ones, as Telegram does.
const MaxDownload = 20 << 20

// heldFile is a file the fake serves through getFile and its download path.
type heldFile struct {
	id, unique, path string
	data             []byte
	size             int64 // as reported; len(data) unless the file is only described
	// redirect, when set, is where its download path sends the client instead (302).
	redirect string
}

// Download is one request for the file download path.
type Download struct {
	Path    string // the file path after /file/bot<token>/
	Status  int
	Referer string // the request's Referer header, if any
	At      time.Time
}

// Image is one size of a photo.
type Image struct {
	Width, Height int
	Data          []byte
}

// AddFile makes data downloadable under a new file id, at the file path dir/file_<n><ext>
// as Telegram lays files out, and returns its id.
func (s *Server) AddFile(dir, ext string, data []byte) string {
	return s.addFile(dir, ext, data, int64(len(data)))
}

// AddLargeFile registers a file of size bytes without holding its bytes: getFile refuses
// it when it is over MaxDownload, as Telegram does, and its download serves zeros.
func (s *Server) AddLargeFile(dir, ext string, size int64) string {
	return s.addFile(dir, ext, nil, size)
}

func (s *Server) addFile(dir, ext string, data []byte, size int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]*heldFile{}
	}
	n := len(s.files)
	f := &heldFile{
		id:     fmt.Sprintf("AgAC-file-%d-%d", n, time.Now().UnixNano()),
		unique: "AQAD" + strconv.Itoa(n),
		path:   fmt.Sprintf("%s/file_%d%s", dir, n, ext),
		data:   data, size: size,
	}
	s.files[f.id] = f
	return f.id
}

// RedirectFile makes the download path of the file id answer with a 302 redirect to
// location (an absolute URL or a path on this server) instead of the file, as a proxy
// or a misconfigured local Bot API server might.
func (s *Server) RedirectFile(id, location string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[id]; ok {
		f.redirect = location
	}
}

// FileURL is the download link of the file id on this server (token included), "" for
// an unknown id.
func (s *Server) FileURL(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	if !ok {
		return ""
	}
	return s.URL + "/file/bot" + s.Token + "/" + f.path
}

// Downloads returns the file downloads asked for, in order.
func (s *Server) Downloads() []Download { return snapshot(s, &s.downloads) }

// VoiceMessage builds a voice note from userID in the private chat chatID saying audio
// (held by the server as voice/file_<n>.oga, audio/ogg) that lasts seconds.
func (s *Server) VoiceMessage(userID, chatID int64, audio []byte, seconds int) models.Message {
	m := TextMessage(userID, chatID, models.ChatTypePrivate, "")
	id := s.AddFile("voice", ".oga", audio)
	m.Voice = &models.Voice{FileID: id, FileUniqueID: s.unique(id), Duration: seconds, MimeType: "audio/ogg", FileSize: int64(len(audio))}
	return m
}

// PhotoMessage builds a photo with caption from userID in the private chat chatID, in
// the given sizes (smallest first, as Telegram lists them), each held by the server.
func (s *Server) PhotoMessage(userID, chatID int64, caption string, sizes ...Image) models.Message {
	m := TextMessage(userID, chatID, models.ChatTypePrivate, "")
	m.Caption, m.CaptionEntities = caption, Entities(caption)
	for _, im := range sizes {
		id := s.AddFile("photos", ".jpg", im.Data)
		m.Photo = append(m.Photo, models.PhotoSize{FileID: id, FileUniqueID: s.unique(id), Width: im.Width, Height: im.Height, FileSize: len(im.Data)})
	}
	return m
}

// DocumentMessage builds a document named name of type mime with caption from userID in
// the private chat chatID, held by the server.
func (s *Server) DocumentMessage(userID, chatID int64, name, mime string, data []byte, caption string) models.Message {
	m := TextMessage(userID, chatID, models.ChatTypePrivate, "")
	m.Caption, m.CaptionEntities = caption, Entities(caption)
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = name[i:]
	}
	id := s.AddFile("documents", ext, data)
	m.Document = &models.Document{FileID: id, FileUniqueID: s.unique(id), FileName: name, MimeType: mime, FileSize: int64(len(data))}
	return m
}

func (s *Server) unique(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files[id].unique
}

// getFile answers with the File object, refusing files over MaxDownload as Telegram does.
func (s *Server) getFile(p map[string]string) (any, *apiError) {
	s.mu.Lock()
	f, ok := s.files[p["file_id"]]
	s.mu.Unlock()
	switch {
	case !ok:
		return nil, badRequest("invalid file_id")
	case f.size > MaxDownload:
		return nil, badRequest("file is too big")
	}
	return models.File{FileID: f.id, FileUniqueID: f.unique, FileSize: f.size, FilePath: f.path}, nil
}

// serveFile serves /file/bot<token>/<path>: the token is checked as on the method path.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	status := http.StatusOK
	var (
		data     []byte
		location string
	)
	s.mu.Lock()
	switch {
	case token != s.Token:
		status = http.StatusUnauthorized
	default:
		status = http.StatusNotFound
		for _, f := range s.files {
			switch {
			case f.path != path:
			case f.redirect != "":
				status, location = http.StatusFound, f.redirect
			default:
				status, data = http.StatusOK, f.data
				if data == nil {
					data = make([]byte, f.size)
				}
			}
		}
	}
	s.downloads = append(s.downloads, Download{Path: path, Status: status, Referer: r.Header.Get("Referer"), At: time.Now()})
	s.notifyLocked()
	s.mu.Unlock()
	if location != "" {
		http.Redirect(w, r, location, status)
		return
	}
	if status != http.StatusOK {
		writeJSON(w, status, apiResponse{ErrorCode: status, Description: http.StatusText(status)})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// CheckType reports how the JSON of v departs from the spec's type name (e.g. "Voice"):
// fields the spec does not define, and required fields that are missing.
func CheckType(name string, v any) ([]string, error) {
	types, err := loadTypes()
	if err != nil {
		return nil, err
	}
	fields, ok := types[name]
	if !ok {
		return nil, fmt.Errorf("the spec has no type %q", name)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal %s: %w", name, err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s is not an object: %w", name, err)
	}
	var bad []string
	for k := range obj {
		if _, ok := fields[k]; !ok {
			bad = append(bad, fmt.Sprintf("%s has no field %q", name, k))
		}
	}
	for f, required := range fields {
		if _, ok := obj[f]; required && !ok {
			bad = append(bad, fmt.Sprintf("%s lacks required field %q", name, f))
		}
	}
	slices.Sort(bad)
	return bad, nil
}
