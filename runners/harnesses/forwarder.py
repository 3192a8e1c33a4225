"""Inside the job's sandbox (which has no network): 127.0.0.1:PORT forwarded to the job's endpoint,
a Unix socket bound in read-only. So the harness reaches that endpoint and nothing else.

Standard library only, run as `python3 -I forwarder.py PORT SOCKET READY_FILE` from a folder of
the runner's (read-only to the agent): it imports nothing from any folder the agent can write.
"""

import asyncio
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(1 << 16):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main(port: int, socket_path: str, ready: str) -> None:
    async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_server(forward, "127.0.0.1", port)
    with open(ready, "w") as f:
        f.write("ready\n")
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
