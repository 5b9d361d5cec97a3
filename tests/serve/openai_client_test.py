#!/usr/bin/env python3
"""`ember serve` through the official openai Python client (PyPI).

Starts the server on a free loopback port with the given model, checks
completions, chat, streaming, stop strings, logprobs and a json_schema
response_format (the output validated with the jsonschema package), then
stops it with SIGTERM and expects exit status 0. Exits 77 (ctest: skipped)
when the openai or jsonschema package is missing. Every wait is bounded: the
server is killed if it does not start or stop in time.

usage: openai_client_test.py --ember PATH/TO/ember --model MODEL.gguf
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import urllib.request

from serve_util import check, exit_status, start_server, stop_server

try:
    import jsonschema
    import openai
except ImportError as e:
    print(f"EMBER_SKIPPED: python package missing ({e.name}); run scripts/setup.sh")
    sys.exit(77)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember", required=True)
    ap.add_argument("--model", required=True)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ember-serve-py-")
    log_path = os.path.join(tmp, "serve.log")
    proc, port = start_server(args.ember, args.model, log_path, "-c", "1024", "-t", "1",
                              "--parallel", "2", "--api-key", "test-key")
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="test-key",
                               timeout=120, max_retries=0)
        greedy = dict(temperature=0, extra_body={"ignore_eos": True})

        models = client.models.list()
        check(len(models.data) == 1 and models.data[0].id.endswith(".gguf"), "models.list")

        c = client.completions.create(model="any", prompt="Once upon a time", max_tokens=8,
                                      **greedy)
        check(c.object == "text_completion" and len(c.choices) == 1, "completion shape")
        check(c.usage.completion_tokens == 8 and c.choices[0].finish_reason == "length",
              "completion usage and finish_reason")
        full = c.choices[0].text

        chat = client.chat.completions.create(
            model="any", messages=[{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": "Hello!"}],
            max_tokens=8, **greedy)
        msg = chat.choices[0].message
        check(msg.role == "assistant" and isinstance(msg.content, str), "chat message")
        check(chat.usage.prompt_tokens > 0 and chat.usage.completion_tokens == 8, "chat usage")

        # Streaming: the pieces join to the whole greedy reply.
        pieces, finish, usage = [], None, None
        for chunk in client.chat.completions.create(
                model="any", messages=[{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": "Hello!"}],
                max_tokens=8, stream=True, stream_options={"include_usage": True}, **greedy):
            if chunk.usage:
                usage = chunk.usage
            for ch in chunk.choices:
                if ch.delta.content:
                    pieces.append(ch.delta.content)
                if ch.finish_reason:
                    finish = ch.finish_reason
        check("".join(pieces) == msg.content, "stream joins to the whole reply")
        check(finish == "length" and usage is not None and usage.completion_tokens == 8,
              "stream finish_reason and usage")

        # Stop: a piece of the greedy reply ends it just before.
        if len(full) >= 6:
            stop = full[len(full) // 2:len(full) // 2 + 2]
            s = client.completions.create(model="any", prompt="Once upon a time", max_tokens=8,
                                          stop=[stop], **greedy)
            check(s.choices[0].text == full[:full.index(stop)] and
                  s.choices[0].finish_reason == "stop", "stop string")

        lp = client.chat.completions.create(
            model="any", messages=[{"role": "user", "content": "Hi"}], max_tokens=4,
            logprobs=True, top_logprobs=2, **greedy)
        content = lp.choices[0].logprobs.content
        check(len(content) == 4 and all(len(t.top_logprobs) == 2 and t.logprob <= 0
                                        for t in content), "chat logprobs")
        check("".join(t.token for t in content) == lp.choices[0].message.content,
              "logprob tokens join to the content")

        schema = {"type": "object",
                  "properties": {"city": {"type": "string", "maxLength": 12},
                                 "population": {"type": "integer", "minimum": 0}},
                  "required": ["city", "population"], "additionalProperties": False}
        for seed in (1, 2):
            js = client.chat.completions.create(
                model="any", messages=[{"role": "user", "content": "A city as JSON"}],
                max_tokens=200, seed=seed, temperature=1.0,
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "city", "schema": schema}})
            doc = json.loads(js.choices[0].message.content)
            try:
                jsonschema.validate(doc, schema)
                check(True, f"json_schema output valid (seed {seed})")
            except jsonschema.ValidationError as e:
                check(False, f"json_schema output valid (seed {seed}): {e.message}")

        # Embeddings as retrieval clients ask for them: the client asks for
        # base64 unless told otherwise and decodes it itself.
        texts = ["The cat sat on the mat.", "A kitten sat on the rug.", "Interest rates rose."]
        emb = client.embeddings.create(model="any", input=texts)
        vecs = [d.embedding for d in emb.data]
        check(len(vecs) == 3 and len(vecs[0]) > 0 and all(len(v) == len(vecs[0]) for v in vecs),
              "embeddings: one vector per input")
        check(all(abs(sum(x * x for x in v) - 1) < 1e-4 for v in vecs),
              "embeddings: unit length")
        check(emb.usage.prompt_tokens > 3, "embeddings: usage")
        flt = client.embeddings.create(model="any", input=texts[0], encoding_format="float")
        check(flt.data[0].embedding == vecs[0], "embeddings: base64 and float agree")
        try:
            client.embeddings.create(model="any", input="")
            check(False, "empty embedding input -> BadRequestError")
        except openai.BadRequestError as e:
            check("input" in str(e), "empty embedding input -> BadRequestError")

        # Errors come back as the client's exceptions, with the server's message.
        try:
            client.chat.completions.create(model="any", messages=[], max_tokens=4)
            check(False, "empty messages -> BadRequestError")
        except openai.BadRequestError as e:
            check("messages" in str(e), "empty messages -> BadRequestError")
        bad = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="wrong",
                            max_retries=0, timeout=30)
        try:
            bad.models.list()
            check(False, "wrong key -> AuthenticationError")
        except openai.AuthenticationError:
            check(True, "wrong key -> AuthenticationError")
    finally:
        code = stop_server(proc)
        check(code == 0, f"SIGTERM: exit status 0 (got {code})")
    status = exit_status(log_path)  # prints the server's log when a check failed
    shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
