package prompt

// innerLife is anima's own notes from the plugins (its journal, the concerns it follows),
// as fitted, one untrusted data block (fitSections).
var innerLife = section{name: "inner life", fitted: true, text: (*Builder).innerLife}

func (c *Builder) innerLife(p *prompt) string { return p.f.sections }
