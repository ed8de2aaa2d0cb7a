package bot_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// Grafana's variables, replaced before a dashboard query is parsed as PromQL. $job and
// $instance become markers the selectors are checked for.
const (
	jobMarker      = "JOB_VARIABLE"
	instanceMarker = "INSTANCE_VARIABLE"
)

var grafanaVars = strings.NewReplacer(
	"${__rate_interval}", "5m", "$__rate_interval", "5m",
	"${__interval}", "1m", "$__interval", "1m",
	"${job}", jobMarker, "$job", jobMarker,
	"${instance}", instanceMarker, "$instance", instanceMarker,
)

// query is one PromQL expression the dashboard or the alert rules ship.
type query struct {
	where string // for messages: the panel title or the alert name
	expr  string
	// scoped: every selector must filter on the dashboard's job and instance variables.
	scoped bool
}

// dashboardQueries returns the dashboard's panel queries and the selectors inside its
// template variables' label_values(…) queries.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "dashboards", "anima.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("decode the dashboard: %v", err)
	}
	var qs []query
	for _, p := range dash.Panels {
		if p.Type == "row" { // a row only groups the panels below it
			if len(p.Targets) > 0 {
				t.Errorf("row %q has queries", p.Title)
			}
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			qs = append(qs, query{where: "panel " + p.Title, expr: tg.Expr, scoped: true})
		}
	}
	vars := map[string]bool{}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	for _, v := range dash.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query: %v", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		qs = append(qs, query{where: "variable " + v.Name, expr: m[1]})
	}
	for _, name := range []string{"datasource", "job", "instance"} {
		if !vars[name] {
			t.Errorf("the dashboard lacks the %s variable", name)
		}
	}
	return qs
}

// alertQueries returns the expressions of the shipped alerting rules.
func alertQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("decode the alert rules: %v", err)
	}
	var qs []query
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{where: "alert " + r.Alert, expr: r.Expr})
		}
	}
	if len(qs) == 0 {
		t.Fatal("no alert rules found")
	}
	return qs
}

// exported returns the metric names anima's /metrics serves: each family's name and, for
// histograms and summaries, the series names derived from it.
func exported(mfs map[string]*dto.MetricFamily) map[string]bool {
	names := map[string]bool{}
	for name, mf := range mfs {
		names[name] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}

// checkQuery parses q with the PromQL parser and reports each selector that names a
// metric anima does not export, or (for a scoped query) that ignores the dashboard's job
// and instance variables.
func checkQuery(q query, names map[string]bool) []string {
	p := parser.NewParser(parser.Options{})
	expr, err := p.ParseExpr(grafanaVars.Replace(q.expr))
	if err != nil {
		return []string{fmt.Sprintf("%s: %q does not parse: %v", q.where, q.expr, err)}
	}
	var problems []string
	selectors := 0
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		selectors++
		name := vs.Name
		matchers := map[string]*labels.Matcher{}
		for _, m := range vs.LabelMatchers {
			matchers[m.Name] = m
		}
		if m := matchers[labels.MetricName]; name == "" && m != nil && m.Type == labels.MatchEqual {
			name = m.Value
		}
		switch {
		case name == "":
			problems = append(problems, fmt.Sprintf("%s: selector %s names no metric", q.where, vs))
		case !names[name]:
			problems = append(problems, fmt.Sprintf("%s: queries %s, which /metrics does not export", q.where, name))
		}
		if q.scoped {
			for label, marker := range map[string]string{"job": jobMarker, "instance": instanceMarker} {
				if m := matchers[label]; m == nil || m.Type != labels.MatchRegexp || m.Value != marker {
					problems = append(problems, fmt.Sprintf("%s: selector %s lacks %s=~\"$%s\"", q.where, vs, label, label))
				}
			}
		}
		return nil
	})
	if selectors == 0 {
		problems = append(problems, fmt.Sprintf("%s: %q selects no metric", q.where, q.expr))
	}
	return problems
}

// TestDashboardMetricsExist checks that every metric the shipped Grafana dashboard and
// alert rules query is one anima actually exports: each query is parsed with Prometheus's
// own PromQL parser, and each of its selectors must name a metric the running service
// serves; the dashboard's selectors must also filter on its job and instance variables,
// so one Grafana can show several bots.
func TestDashboardMetricsExist(t *testing.T) {
	t.Parallel()
	dash, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "dashboards", "anima.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.cfg.MCP = mcpServers(t) // the MCP row's metrics exist once a server is up
	addrs := h.run()
	waitMetric(waitCtx(t), t, addrs.Metrics, `anima_mcp_server_up{server="web"} 1`)
	h.say("hello")
	resp, err := http.Get("http://" + addrs.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range regexp.MustCompile(`anima_[a-z_]+`).FindAllString(string(dash), -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if !strings.Contains(string(body), "# TYPE "+base+" ") {
			t.Errorf("the dashboard queries %s, which /metrics does not export", name)
		}
	}

	names := exported(scrape(t, addrs.Metrics))
	qs := append(dashboardQueries(t), alertQueries(t)...)
	for _, q := range qs {
		for _, p := range checkQuery(q, names) {
			t.Error(p)
		}
	}
	t.Logf("%d dashboard and alert queries parsed and checked", len(qs))
}

// TestCheckQueryFindsProblems: the check above rejects what it is meant to reject.
func TestCheckQueryFindsProblems(t *testing.T) {
	t.Parallel()
	names := map[string]bool{"anima_ticks_total": true, "anima_reply_latency_seconds_bucket": true}
	for _, tc := range []struct {
		name string
		q    query
		want string // in the one problem reported; "" for none
	}{
		{"exported and scoped", query{where: "p", scoped: true,
			expr: `histogram_quantile(0.95, sum by (le) (rate(anima_reply_latency_seconds_bucket{job=~"$job",instance=~"${instance}"}[$__rate_interval])))`}, ""},
		{"unknown metric", query{where: "p", expr: `rate(anima_tick_total[5m])`}, "anima_tick_total, which /metrics does not export"},
		{"unscoped dashboard selector", query{where: "p", scoped: true, expr: `rate(anima_ticks_total{job=~"$job"}[5m])`}, `lacks instance=~"$instance"`},
		{"unparseable", query{where: "p", expr: `rate(anima_ticks_total[5m]`}, "does not parse"},
		{"no metric name", query{where: "p", expr: `{job="anima"}`}, "names no metric"},
		{"no selector", query{where: "p", expr: `1 + 1`}, "selects no metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkQuery(tc.q, names)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("problems %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
}
