package prompt

// share is, in a chat run, the thought anima kept to share that the run is offered
// (keptShare: the person came back after a while), and how to bring it up: after
// answering them, if what they wrote leaves room, and never in place of what they need.
// The answer's topic says whether it was said (shareContract), so that it is said once.
var share = section{name: "share", text: (*Builder).share}

func (c *Builder) share(p *prompt) string {
	if p.profile != "chat" || !p.topicOK {
		return ""
	}
	return "You kept something to share with them: " + sharedQuote(p.w, p.topic) + ". They have come back after a " +
		"while: if what they wrote leaves room, bring it up briefly in your own words after answering them; if they " +
		"need something else now, keep it for another time."
}
