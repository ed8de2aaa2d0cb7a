package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// progress is what a run of init has checked so far, kept beside the configuration it
// will write, so that a run stopped midway (Ctrl-C, a check that failed three times, the
// end of the input) can be resumed without entering it again. It holds the token and
// the key, as the configuration will: the file is the user's, mode 0600, like the
// configuration (write), and it is removed once the configuration is written.
type progress struct {
	APIURL     string `json:"api_url,omitempty"`
	Token      string `json:"token,omitempty"`
	Bot        string `json:"bot,omitempty"` // the token's bot, @name, for the question to resume
	LLMBaseURL string `json:"llm_base_url,omitempty"`
	LLMKey     string `json:"llm_key,omitempty"`
	FastModel  string `json:"fast_model,omitempty"`
	SmartModel string `json:"smart_model,omitempty"`
	Timezone   string `json:"timezone,omitempty"`
}

// ProgressFile is where init keeps what it has checked while it writes out.
func ProgressFile(out string) string { return out + ".init-progress" }

// loadProgress reads the progress file at path; ok is false when there is none.
func loadProgress(path string) (p progress, ok bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, false, fmt.Errorf("read %s (remove it to start afresh): %w", path, err)
	}
	return p, p != progress{}, nil
}

// save replaces the progress file at path with p, mode 0600, by a rename: a run
// stopped while it writes leaves the previous one whole.
func (p progress) save(path string) error {
	raw, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".anima-init-progress-*") // CreateTemp's mode is 0600
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(raw, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// fill gives the answers p holds to the options not given: a flag given on the run
// that resumes wins over what the earlier run checked. Each answer is checked again as
// a flag is, without asking.
func (p progress) fill(o *Options) {
	set := func(v *string, saved string) {
		if *v == "" {
			*v = saved
		}
	}
	if o.APIURL == "" || strings.TrimRight(o.APIURL, "/") == p.APIURL {
		set(&o.APIURL, p.APIURL)
		set(&o.Token, p.Token) // the token was checked against that Bot API
	}
	if o.LLMBaseURL == "" || strings.TrimRight(o.LLMBaseURL, "/") == p.LLMBaseURL {
		set(&o.LLMBaseURL, p.LLMBaseURL)
		set(&o.LLMKey, p.LLMKey)
	}
	set(&o.FastModel, p.FastModel)
	set(&o.SmartModel, p.SmartModel)
	set(&o.Timezone, p.Timezone)
}

// summary names what p holds, without the secrets.
func (p progress) summary() string {
	var has []string
	if p.Token != "" {
		has = append(has, "the token of @"+p.Bot)
	}
	if p.LLMBaseURL != "" {
		has = append(has, "the endpoint "+p.LLMBaseURL)
	}
	if p.FastModel != "" {
		has = append(has, "the models "+modelNames(p.FastModel, p.SmartModel))
	}
	if p.Timezone != "" {
		has = append(has, "the time zone "+p.Timezone)
	}
	return strings.Join(has, ", ")
}

// keep records what a step has checked in the progress file; a progress file that
// cannot be written costs only the resume, so it is said and the run goes on.
func (s *session) keep(update func(*progress)) {
	update(&s.prog)
	if err := s.prog.save(s.progPath); err != nil {
		fmt.Fprintf(s.out, "  (Cannot keep the answers checked so far, so a stopped run could not resume: %s.)\n", err)
	}
}

// resume offers the answers an earlier run checked, when it left any: the options not
// given take them (fill), or, declined, the file is removed and every question asked.
func (s *session) resume() error {
	p, ok, err := loadProgress(s.progPath)
	if err != nil || !ok {
		return err
	}
	fmt.Fprintf(s.out, "An earlier anima init stopped before writing %s; %s holds what it checked: %s.\n",
		s.opt.Out, s.progPath, p.summary())
	yes := true
	if !s.opt.Yes {
		fmt.Fprint(s.out, "Resume where you stopped? [Y/n]: ")
		a, err := s.answer("Resume where you stopped?", "y", "give --yes to resume without asking")
		if err != nil {
			return err
		}
		yes = strings.HasPrefix(strings.ToLower(a), "y")
	}
	if !yes {
		if err := os.Remove(s.progPath); err != nil {
			return fmt.Errorf("remove %s: %w", s.progPath, err)
		}
		fmt.Fprintln(s.out, "Starting afresh.")
		return nil
	}
	fmt.Fprintln(s.out, "Resuming: each answer is checked again, and only what is left is asked.")
	s.prog = p
	p.fill(&s.opt)
	return nil
}
