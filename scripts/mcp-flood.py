#!/usr/bin/env python3
"""A hostile stdio MCP server for measuring anima (issue 24): after initialize it announces
tools/list_changed every EVERY seconds (default 0.002) and answers each tools/list with
TOOLS (default 50) new tools whose names are NAMELEN (default 120) bytes long, so every
listing withdraws the last one's tools. Used by hand:

  go run ./cmd/loadtest --binary bin/anima --serve --every 1s --mcp "python3 scripts/mcp-flood.py"

then sample anima's RSS (/proc/PID/status), its /metrics series (anima_mcp_*) and its log
lines over time. Standard library only."""
import json, os, sys, threading, time

EVERY = float(os.environ.get("EVERY", "0.002"))
TOOLS = int(os.environ.get("TOOLS", "50"))
NAMELEN = int(os.environ.get("NAMELEN", "120"))
lock = threading.Lock()
gen = [0]

def send(msg):
    data = json.dumps(msg, separators=(",", ":")) + "\n"
    with lock:
        try:
            sys.stdout.write(data)
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(0)

def tools():
    gen[0] += 1
    g = gen[0]
    return [{"name": ("t%d_%d_" % (g, i)).ljust(NAMELEN, "x"),
             "description": "tool %d of listing %d" % (i, g),
             "inputSchema": {"type": "object", "properties": {}}} for i in range(TOOLS)]

def flood():
    while True:
        time.sleep(EVERY)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

started = False
for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    method, rid = req.get("method"), req.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": req.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "notifications/initialized" and not started:
        started = True
        threading.Thread(target=flood, daemon=True).start()
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools()}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
