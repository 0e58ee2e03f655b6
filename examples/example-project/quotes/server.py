"""A small HTTP front for the quotes: GET /health and GET /quote?postcode=..&weight_g=..."""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from quotes.rates import QuoteError, load_rates, quote


class QuoteHandler(BaseHTTPRequestHandler):
    rates = None

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/health":
            self.reply(200, {"status": "ok", "rates_version": self.rates["version"]})
        elif url.path == "/quote":
            query = parse_qs(url.query)
            try:
                weights = [int(value) for value in query.get("weight_g", [])]
                postcode = query.get("postcode", [""])[0]
                self.reply(200, quote(self.rates, weights, postcode))
            except (ValueError, QuoteError) as error:
                self.reply(400, {"error": str(error)})
        else:
            self.reply(404, {"error": "not found"})

    def reply(self, status, body):
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):  # one line per request, without the client address
        print("%s %s" % (self.command, self.path))


def serve(port=8080, rates=None):
    QuoteHandler.rates = rates or load_rates()
    server = ThreadingHTTPServer(("127.0.0.1", port), QuoteHandler)
    print("listening on http://127.0.0.1:%d" % port)
    server.serve_forever()
