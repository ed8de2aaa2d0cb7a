package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// WriteText writes r as a table: overall, per category, per conversation.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d conversations, %d turns, %d questions judged (%d without evidence among the turns); "+
		"Recall at %d tokens; speaker A the person, speaker B anima\n\n",
		len(r.order), r.Overall.Turns, r.Overall.Questions, r.Unjudged, r.BudgetTokens)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\tquestions\tmemories any\tall\tprompt any\tall\tmemory tokens p50\tRecall p50 µs\tp99 µs\tbytes/turn\t"
	if r.K > 0 {
		head += fmt.Sprintf("search@%d any\t", r.K)
	}
	fmt.Fprintln(tw, head)
	r.row(tw, "overall", r.Overall)
	cats := slices.SortedFunc(maps.Keys(r.Categories), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	for _, c := range cats {
		n, _ := strconv.Atoi(c)
		name := c
		if Category[n] != "" {
			name += " " + Category[n]
		}
		r.row(tw, name, r.Categories[c])
	}
	for _, c := range r.order {
		r.row(tw, c, r.Conversations[c])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	_, err := fmt.Fprintf(w, "\nwritten in %s, asked in %s\n", r.Written.Round(time.Millisecond), r.Asked.Round(time.Millisecond))
	if err == nil && r.Embedding != nil {
		e := r.Embedding
		_, err = fmt.Fprintf(w, "embeddings (%s): %d requests (%d failed), %d texts, %d tokens\n", e.ID(), e.Requests, e.Failed, e.Texts, e.Tokens)
	}
	return err
}

func (r Report) row(w io.Writer, name string, f *Figures) {
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + " %" }
	bpt := "–"
	if f.Turns > 0 {
		bpt = strconv.FormatFloat(f.BytesPerTurn, 'f', 0, 64)
	}
	line := fmt.Sprintf("%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t", name, f.Questions,
		pct(f.MemoriesAny), pct(f.MemoriesAll), pct(f.PromptAny), pct(f.PromptAll),
		f.MemoryTokensP50, f.RecallP50us, f.RecallP99us, bpt)
	if f.SearchAnyAtK != nil {
		line += pct(*f.SearchAnyAtK) + "\t"
	}
	fmt.Fprintln(w, line)
}
