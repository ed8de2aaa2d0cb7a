package cognition

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/provider"
)

// The final answer's format. Every request asks for the answer as a strict JSON schema
// (response_format json_schema) alongside the tools, so that an endpoint that honours it
// cannot wrap the object in prose. An endpoint that refuses response_format for a model (a
// 400 naming response_format or json_schema) is asked again at once without it, and that
// model is never asked with it again by this process (one Cognition has one endpoint);
// its answers are then read by the lenient rule of parseAnswerLoose.

// answerSchema is the schema of the final answer: all fields required, nothing else.
var answerSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"response":{"type":"string","description":"your message, Markdown allowed; empty to say nothing"},` +
	`"status":{"type":"string","enum":["active","awaiting_answer","closed","idle"]},` +
	`"confidence":{"type":"number","description":"0 to 1: how sure you are this is a good message"}},` +
	`"required":["response","status","confidence"],"additionalProperties":false}`)

// openerSchema is the final answer of a run that may write first (the proactive and
// check-in prompts): the answer's fields and topic, a short label of what the message is
// about, null when it says nothing. A strict schema requires every property: the optional
// one is a null union.
var openerSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"response":{"type":"string","description":"your message, Markdown allowed; empty to say nothing"},` +
	`"status":{"type":"string","enum":["active","awaiting_answer","closed","idle"]},` +
	`"confidence":{"type":"number","description":"0 to 1: how sure you are this is a good message"},` +
	`"topic":{"type":["string","null"],"description":"what your message is about, in a few words; null when you say nothing"}},` +
	`"required":["response","status","confidence","topic"],"additionalProperties":false}`)

// shareSchema is the final answer of a chat run offered a thought to share: the answer's
// fields and topic, a few words of the thought when the message brings it up, null when
// it does not.
var shareSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"response":{"type":"string","description":"your message, Markdown allowed; empty to say nothing"},` +
	`"status":{"type":"string","enum":["active","awaiting_answer","closed","idle"]},` +
	`"confidence":{"type":"number","description":"0 to 1: how sure you are this is a good message"},` +
	`"topic":{"type":["string","null"],"description":"the thought you kept to share, in a few words, when your message brings it up; null when it does not"}},` +
	`"required":["response","status","confidence","topic"],"additionalProperties":false}`)

// answerFormat is the response_format of every request while the model takes it, but
// those of runs that may write first, which ask for openerFormat, and of chat runs offered
// a thought to share, which ask for shareFormat.
var answerFormat = &openai.ChatCompletionResponseFormat{
	Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
	JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
		Name: "final_answer", Schema: answerSchema, Strict: true,
		Description: "anima's final answer of a turn",
	},
}

// openerFormat is the response_format of a run that may write first.
var openerFormat = &openai.ChatCompletionResponseFormat{
	Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
	JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
		Name: "final_answer", Schema: openerSchema, Strict: true,
		Description: "anima's final answer of a turn in which it may write first",
	},
}

// shareFormat is the response_format of a chat run offered a thought to share.
var shareFormat = &openai.ChatCompletionResponseFormat{
	Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
	JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
		Name: "final_answer", Schema: shareSchema, Strict: true,
		Description: "anima's final answer of a turn in which it may share a thought it kept",
	},
}

// formats reports whether model is asked for the answer format: when the configuration
// says so, until it refused it once.
func (c *Cognition) formats(model string) bool {
	if !c.cfg.AnswerFormat {
		return false
	}
	_, refused := c.noFormat.Load(model)
	return !refused
}

// sendFormatted makes one request (see send), asking for the answer format when the model
// takes it (the one req names, chatRequest's choice; answerFormat when it names none); a
// refusal of the format turns it off for the model and the request is made again at once
// without it.
func (c *Cognition) sendFormatted(ctx context.Context, req openai.ChatCompletionRequest, ds *drafts) (openai.ChatCompletionResponse, error) {
	format := req.ResponseFormat
	if format == nil {
		format = answerFormat
	}
	req.ResponseFormat = nil
	if !c.formats(req.Model) {
		return c.send(ctx, req, ds)
	}
	req.ResponseFormat = format
	resp, err := c.send(ctx, req, ds)
	if err == nil || !refusesFormat(err) {
		return resp, err
	}
	if _, already := c.noFormat.LoadOrStore(req.Model, true); !already {
		c.m.formatFallbacks.Inc()
		c.log.Warn("llm endpoint refused response_format; answers of this model are read from plain text",
			"model", req.Model, "err", redactProvider(err))
	}
	req.ResponseFormat = nil
	return c.send(ctx, req, ds)
}

// refusesFormat reports whether an error says the endpoint does not take response_format (a
// json_schema one): a 400 whose param or message names it.
func refusesFormat(err error) bool {
	if provider.Status(err) != http.StatusBadRequest {
		return false
	}
	msg := providerMessage(err)
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.Param != nil {
		msg += " " + *apiErr.Param
	}
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "response_format") || strings.Contains(msg, "json_schema") ||
		strings.Contains(msg, "response format")
}
