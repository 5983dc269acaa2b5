"""Starting the OAuth fixture server (tests/fixtures/servers/oauth_server.py) on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVERS = Path(__file__).resolve().parent / "fixtures" / "servers"
FOLLOW = [sys.executable, str(SERVERS / "follow_login.py")]
M2M_SECRET = "m2m-secret-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OAuthServer:
    """The fixture as a process; ``url`` is its MCP endpoint."""

    def __init__(self, *args: str, transport: str = "streamable-http", public_key: str | None = None, challenge: bool = False) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + ("/mcp" if transport == "streamable-http" else "/sse")
        self.log = tempfile.TemporaryFile()
        env = {**os.environ, "OAUTH_FIXTURE_M2M_SECRET": M2M_SECRET, **({"OAUTH_FIXTURE_JWT_PUBLIC_KEY": public_key} if public_key else {})}
        if challenge:
            env["OAUTH_FIXTURE_CHALLENGE"] = "1"
        command = [sys.executable, str(SERVERS / "oauth_server.py"), "--port", str(self.port), "--transport", transport, *args]
        self.proc = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120  # generous: a loaded machine
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.log.seek(0)
                    raise RuntimeError(f"oauth fixture not listening: {self.log.read().decode()}") from None
                time.sleep(0.05)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def rsa_key_pair(folder: Path) -> tuple[Path, Path]:
    """(private, public) PEM files of a fresh RSA key, made with the openssl command."""
    private, public = folder / "key.pem", folder / "key.pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(private)], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True, capture_output=True)
    return private, public
