"""An OpenAI-compatible server for passk's tests, behaving as real ones do.

It serves /v1/completions, /v1/chat/completions and /v1/models, answering each prompt
from a file of answers (JSON Lines of `task_id`, `completion`), found by the problem whose
prompt the request carries. A problem's answers are handed out in turn, so n samples of
a problem with n answers get each once. What real servers do to clients is asked for by
flags: rate limits (429 with Retry-After), failures (500), dropped connections, slow
answers, a refusal of `max_tokens` (OpenAI's newer models) or of `n > 1`, or an `n`
silently ignored (llama.cpp's server).

Problems may be any file passk reads whose records carry their text: HumanEval's and
MultiPL-E's `prompt`, MBPP's `text`, the contest sets' `description`, `question_content`,
`question` or `content`; JSON Lines or one JSON array, gzipped or not. With
--whole-programs the answers are whole programs (MBPP's, the contest sets'), and a chat
answer fences the answer alone rather than the prompt and its continuation.

Every request is logged as a JSON line (path, body, the status answered) to --log.
The port it listens on is printed on the first line of standard output.
"""

import argparse
import gzip
import http.server
import json
import sys
import threading
import time


def read_records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        text = file.read()
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


TEXT_FIELDS = ("prompt", "text", "description", "question_content", "question", "content")
ID_FIELDS = ("task_id", "name", "question_id", "problem_id", "id")


def problem_text(problem):
    # A sanitized MBPP record has both `prompt` (its words) and `code`; any field will do
    # that the request quotes.
    return next((problem[field] for field in TEXT_FIELDS if isinstance(problem.get(field), str)), "")


def problem_id(problem):
    return str(next(problem[field] for field in ID_FIELDS if field in problem))


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.requests = 0
        problems = read_records(args.problems)
        self.prompts = [(problem_id(p), problem_text(p)) for p in problems]
        self.answers = {}
        for answer in read_records(args.answers):
            self.answers.setdefault(answer["task_id"], []).append(answer["completion"])
        self.handed = {}
        self.log = open(args.log, "a", encoding="utf-8") if args.log else None

    def number(self):
        with self.lock:
            self.requests += 1
            return self.requests

    def task_of(self, text):
        # The longest prompt found in the text: a chat instruction quotes it whole.
        found = [(len(prompt), task_id) for task_id, prompt in self.prompts if prompt.strip() and prompt.strip() in text]
        return max(found)[1] if found else None

    def next_answer(self, task_id):
        with self.lock:
            answers = self.answers[task_id]
            turn = self.handed.get(task_id, 0)
            self.handed[task_id] = turn + 1
            return answers[turn % len(answers)]

    def record(self, entry):
        if self.log:
            with self.lock:
                self.log.write(json.dumps(entry) + "\n")
                self.log.flush()


def every(count, number):
    return count > 0 and number % count == 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        # Logged before it is sent, so that a client that has its answer finds it logged.
        self.logged(status)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, message, headers=()):
        self.reply(status, {"error": {"message": message, "type": "invalid_request_error"}}, headers)

    def do_GET(self):
        state = self.server.state
        if self.path.rstrip("/") == "/v1/models":
            self.reply(200, {"object": "list", "data": [{"id": state.args.model, "object": "model"}]})
        else:
            self.error(404, "no such path")

    def logged(self, status):
        entry = getattr(self, "entry", None)
        if entry is not None:
            entry["status"] = status
            self.server.state.record(entry)
            self.entry = None

    def do_POST(self):
        state = self.server.state
        args = state.args
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        number = state.number()
        self.entry = {"number": number, "path": self.path, "body": body,
                      "authorization": self.headers.get("Authorization")}
        self.answer(state, args, body, number)

    def answer(self, state, args, body, number):
        chat = self.path == "/v1/chat/completions"
        if self.path not in ("/v1/completions", "/v1/chat/completions"):
            self.error(404, "no such path")
            return 404
        if args.key and self.headers.get("Authorization") != "Bearer " + args.key:
            self.error(401, "Incorrect API key provided.")
            return 401
        if body.get("model") != args.model:
            self.error(404, "The model `%s` does not exist." % body.get("model"))
            return 404
        if every(args.drop_every, number):
            # A connection dropped mid-request, as a proxy or a crashed worker does.
            self.logged("dropped")
            self.close_connection = True
            self.connection.shutdown(2)
            return "dropped"
        if every(args.rate_limit_every, number):
            self.error(429, "Rate limit reached.", [("Retry-After", "1")])
            return 429
        if every(args.fail_every, number):
            self.error(500, "The server had an error while processing your request.")
            return 500
        if args.refuse_max_tokens and "max_tokens" in body:
            self.error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                            "Use 'max_completion_tokens' instead.")
            return 400
        if args.refuse_n and body.get("n", 1) > 1:
            self.error(400, "Invalid value for 'n': only n = 1 is supported.")
            return 400
        if args.redirect:
            self.logged(307)
            self.send_response(307)
            self.send_header("Location", args.redirect + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return 307
        if args.huge_answer:
            # A body past any sample's size, sent in pieces as a runaway server would.
            self.logged(200)
            size = args.huge_answer << 20
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            piece = b"x" * (1 << 20)
            try:
                for _ in range(args.huge_answer):
                    self.wfile.write(piece)
            except OSError:
                pass
            return 200
        if args.delay:
            time.sleep(args.delay)
        text = " ".join(m["content"] for m in body["messages"]) if chat else body["prompt"]
        task_id = state.task_of(text)
        if task_id is None or task_id not in state.answers:
            self.error(400, "the test server has no answer for this prompt")
            return 400
        n = 1 if args.ignore_n else body.get("n", 1)
        if args.half_choices:
            n = (n + 1) // 2
        n += args.extra_choices
        choices = []
        for index in range(n):
            completion = state.next_answer(task_id)
            if chat:
                code = completion if args.whole_programs else dict(state.prompts)[task_id] + completion
                content = "Here is the code:\n\n```%s\n%s\n```\n\nIt does what is asked." % (args.fence, code.rstrip("\n"))
                choices.append({"index": index, "message": {"role": "assistant",
                                                            "content": None if args.textless else content},
                                "finish_reason": "stop"})
            else:
                # What a base model runs on to, unless the request's stop sequences end it.
                text = completion + args.run_on
                stops = [text.find(stop) for stop in body.get("stop") or [] if stop in text]
                choices.append({"index": index, "text": text[:min(stops)] if stops else text, "finish_reason": "stop"})
        tokens = sum(len((c.get("text") or c.get("message", {}).get("content") or "").split()) for c in choices)
        self.reply(200, {"id": "cmpl-%d" % number, "object": "chat.completion" if chat else "text_completion",
                         "model": args.model, "choices": choices,
                         "usage": {"prompt_tokens": 1, "completion_tokens": tokens, "total_tokens": tokens + 1}})
        return 200


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", required=True)
    parser.add_argument("--answers", required=True)
    parser.add_argument("--model", default="test-model")
    parser.add_argument("--key")
    parser.add_argument("--log")
    parser.add_argument("--rate-limit-every", type=int, default=0)
    parser.add_argument("--fail-every", type=int, default=0)
    parser.add_argument("--drop-every", type=int, default=0)
    parser.add_argument("--refuse-max-tokens", action="store_true")
    parser.add_argument("--refuse-n", action="store_true")
    parser.add_argument("--ignore-n", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--whole-programs", action="store_true")
    parser.add_argument("--redirect", help="answer every request 307 to this base")
    parser.add_argument("--huge-answer", type=int, default=0, help="answer 200 with this many MiB")
    parser.add_argument("--half-choices", action="store_true", help="answer half the choices asked for")
    parser.add_argument("--extra-choices", type=int, default=0, help="answer this many choices more than asked")
    parser.add_argument("--textless", action="store_true", help="answer chat choices whose content is null")
    parser.add_argument("--fence", default="python", help="the language a chat answer's fence names")
    parser.add_argument("--run-on", default="\n\ndef check_it():\n    pass\n",
                        help="what a base model writes after its answer, unless a stop sequence ends it")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(args)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
