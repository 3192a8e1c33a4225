"""A job's model endpoint for an external harness: each API it speaks (`messages_wire`: Anthropic
Messages, `responses_wire`: OpenAI Responses) translated onto the job's `Model` (`server`)."""
