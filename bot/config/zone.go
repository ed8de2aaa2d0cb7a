package config

import (
	"strings"
	"time"
	"unicode"
)

// zoneAreas are the areas of the tz database's names (Europe/Berlin), with the
// subareas some zones sit one level deeper in (America/Argentina/Salta).
var zoneAreas = []string{"Africa", "America", "America/Argentina", "America/Indiana", "America/Kentucky",
	"America/North_Dakota", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific"}

// SuggestZones returns the tz database names whose last element is that of name, read
// case-insensitively ("Berlin", "berlin" and "europe/BERLIN" give Europe/Berlin;
// "new york" gives America/New_York), for a "did you mean" after an unknown zone. It
// asks time.LoadLocation, so it knows the zones anima can load, the embedded
// time/tzdata's included; nil when none matches.
func SuggestZones(name string) []string {
	last := strings.TrimSpace(name)
	if i := strings.LastIndexByte(last, '/'); i >= 0 {
		last = last[i+1:]
	}
	last = strings.Join(strings.Fields(last), "_")
	if last == "" || strings.ContainsAny(last, ".\\") {
		return nil
	}
	spellings := []string{last, titleWords(last), strings.ToUpper(last)}
	var out []string
	seen := map[string]bool{name: true}
	for _, area := range append([]string{""}, zoneAreas...) {
		for _, s := range spellings {
			cand := s
			if area != "" {
				cand = area + "/" + s
			}
			if seen[cand] {
				continue
			}
			seen[cand] = true
			if _, err := time.LoadLocation(cand); err == nil && cand != "Local" {
				out = append(out, cand)
			}
		}
	}
	return out
}

// titleWords capitalises the first letter of each word of s (words split by _ and -) and
// lowers the rest: "NEW_york" is "New_York".
func titleWords(s string) string {
	b := []rune(strings.ToLower(s))
	for i, r := range b {
		if i == 0 || b[i-1] == '_' || b[i-1] == '-' {
			b[i] = unicode.ToUpper(r)
		}
	}
	return string(b)
}

// didYouMean is " Did you mean A or B?" for the zones SuggestZones finds for name, or "".
func didYouMean(name string) string {
	z := SuggestZones(name)
	if len(z) == 0 {
		return ""
	}
	return " Did you mean " + strings.Join(z, " or ") + "?"
}
