"""A tiny random Llama that vLLM can serve, made on the spot with no download.

Run with the Python of vLLM's environment (it has transformers and tokenizers; the project's venv
does not): `python tests/helpers/vllm_tiny_model.py OUT_DIR[:HEAD_SIZE]...` (head size 64 unless
named; several models in one run pay torch's import once). Two layers, random weights,
a byte-level BPE tokenizer trained here on a few lines of text, and a ChatML chat template that
lists the tools and renders tool calls as Hermes' `<tool_call>{...}</tool_call>`, so vLLM's `hermes`
parser reads them. Its replies are noise: tests force well-formed tool calls with a regex
(`structured_outputs`). vLLM's CPU attention needs a head size of 64 or more: at 16 the server
answers `/v1/models` and dies on its first completion, which tests use on purpose.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = """\
{%- if tools -%}
<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}
{% endif %}Tools:{% for t in tools %} {{ t | tojson }}{% endfor %}<|im_end|>
{% endif -%}
{%- for m in messages -%}
{%- if m.role == 'system' and tools -%}
{%- elif m.role == 'assistant' -%}
<|im_start|>assistant
{{ m.content or '' }}{% for c in m.tool_calls or [] %}<tool_call>{"name": "{{ c.function.name }}", "arguments": \
{{ c.function.arguments if c.function.arguments is string else c.function.arguments | tojson }}}</tool_call>{% endfor %}<|im_end|>
{% elif m.role == 'tool' -%}
<|im_start|>user
<tool_response>{{ m.content }}</tool_response><|im_end|>
{% else -%}
<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}
"""
CORPUS = [
    "You are a helpful assistant. Use the tools to read the files in the workspace.",
    '<tool_call>{"name": "bash", "arguments": {"command": "ls -la"}}</tool_call>',
    "<tool_response>report.md data.csv notes.txt output/</tool_response>",
    "How many rows does data.csv have? The answer is 3. Write the summary to output/summary.md.",
    "The quick brown fox jumps over the lazy dog 0123456789 {}[]():;,.!?\"'-_/\\=+*<>|#@$%&~`^",
]


def make(out: Path, head_size: int = 64) -> Path:
    """Write the model, its tokenizer and chat template to `out`; returns `out`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)

    heads = 2
    config = LlamaConfig(vocab_size=len(fast), hidden_size=heads * head_size, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=heads,
                         head_dim=head_size, max_position_embeddings=16384, tie_word_embeddings=True,
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id, torch_dtype="bfloat16")
    torch.manual_seed(0)
    LlamaForCausalLM(config).to(torch.bfloat16).save_pretrained(out)
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": fast.eos_token_id}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", metavar="OUT_DIR[:HEAD_SIZE]")
    for spec in ap.parse_args().models:
        out, _, head = spec.partition(":")
        make(Path(out), int(head or 64))


if __name__ == "__main__":
    main()
