#!/usr/bin/env python3
# A raw NBD client for the functional tests: speaks the wire protocol byte by
# byte (doc/proto.md) so that tests can send what real clients never do --
# garbage, truncated handshakes, bad flags, out-of-range requests -- and
# check the exact answer.  Usage: nbd_raw.py ADDRESS CHECK
#   ADDRESS: HOST:PORT or unix:PATH
#   CHECK:   one of the functions named check_* below
#   EXPORT:  optional third argument, the export name (default "")
# env NBD_BASE: byte offset check_commands writes at (default 8192), so that
#   parallel runs do not overlap.
# Exit 0 when every assertion holds, 1 otherwise (message on stderr).
import os
import socket
import struct
import sys
import time

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REPMAGIC = 0x0003E889045565A9
REQMAGIC = 0x25609513
SIMPLE = 0x67446698
STRUCT = 0x668E33EF

OPT_EXPORT_NAME, OPT_ABORT, OPT_LIST, OPT_STARTTLS = 1, 2, 3, 5
OPT_INFO, OPT_GO, OPT_STRUCTURED_REPLY = 6, 7, 8
OPT_LIST_META, OPT_SET_META = 9, 10
REP_ACK, REP_SERVER, REP_INFO, REP_META = 1, 2, 3, 4
ERR_UNSUP, ERR_POLICY, ERR_INVALID = 0x80000001, 0x80000002, 0x80000003
ERR_UNKNOWN, ERR_TOO_BIG = 0x80000006, 0x80000009
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM = 0, 1, 2, 3, 4
CMD_CACHE, CMD_WRITE_ZEROES, CMD_BLOCK_STATUS = 5, 6, 7
FLAG_FUA, FLAG_NO_HOLE, FLAG_DF, FLAG_REQ_ONE, FLAG_FAST_ZERO = 1, 2, 4, 8, 16
EPERM, EINVAL, ENOSPC, EOVERFLOW, ENOTSUP = 1, 22, 28, 75, 95


EXPORT = b""
BASE = int(os.environ.get("NBD_BASE", "8192"))


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


class Conn:
    def __init__(self, addr):
        if addr.startswith("unix:"):
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.s.connect(addr[5:])
        else:
            host, port = addr.rsplit(":", 1)
            self.s = socket.create_connection((host, int(port)))
        self.s.settimeout(10)
        self.handle = 0

    def recvn(self, n):
        buf = b""
        while len(buf) < n:
            d = self.s.recv(n - len(buf))
            if not d:
                raise EOFError("server closed the connection")
            buf += d
        return buf

    def closed_by_server(self, timeout=5):
        """True when the server closes (EOF or reset) within timeout."""
        self.s.settimeout(timeout)
        try:
            while True:
                d = self.s.recv(4096)
                if not d:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    # ---------------------------------------------------------- handshake
    def greeting(self):
        magic, opt, hflags = struct.unpack(">QQH", self.recvn(18))
        expect(magic == NBDMAGIC and opt == IHAVEOPT, "bad greeting magic")
        expect(hflags == 3, "handshake flags %#x, want FIXED_NEWSTYLE|NO_ZEROES" % hflags)
        return hflags

    def start(self, cflags=3):
        self.greeting()
        self.s.sendall(struct.pack(">I", cflags))

    def opt(self, opt, data=b""):
        self.s.sendall(struct.pack(">QII", IHAVEOPT, opt, len(data)) + data)

    def reply(self):
        magic, opt, rtype, ln = struct.unpack(">QIII", self.recvn(20))
        expect(magic == REPMAGIC, "bad option reply magic %#x" % magic)
        return opt, rtype, self.recvn(ln)

    def replies(self, opt, data=b""):
        """Send an option; collect replies up to the final one."""
        self.opt(opt, data)
        out = []
        while True:
            o, t, d = self.reply()
            expect(o == opt, "reply for option %d, sent %d" % (o, opt))
            out.append((t, d))
            if t == REP_ACK or t & 0x80000000:
                return out

    def go(self, name=None, structured=True, meta=True, reqs=(3,)):
        if name is None:
            name = EXPORT
        if structured:
            r = self.replies(OPT_STRUCTURED_REPLY)
            expect(r[-1][0] == REP_ACK, "structured replies refused")
        if meta:
            q = b"base:allocation"
            r = self.replies(OPT_SET_META, struct.pack(">I", len(name)) + name +
                             struct.pack(">II", 1, len(q)) + q)
            expect(r[0][0] == REP_META, "base:allocation not selected")
        data = struct.pack(">I", len(name)) + name + struct.pack(">H", len(reqs))
        data += b"".join(struct.pack(">H", t) for t in reqs)
        r = self.replies(OPT_GO, data)
        expect(r[-1][0] == REP_ACK, "GO failed: %#x" % r[-1][0])
        info = {}
        for t, d in r:
            if t == REP_INFO:
                info[struct.unpack(">H", d[:2])[0]] = d[2:]
        size, tflags = struct.unpack(">QH", info[0])
        self.size, self.tflags, self.structured = size, tflags, structured
        return size, tflags

    # ---------------------------------------------------------- transmission
    def request(self, cmd, offset=0, length=0, flags=0, data=b""):
        self.handle += 1
        self.s.sendall(struct.pack(">IHHQQI", REQMAGIC, flags, cmd, self.handle,
                                   offset, length) + data)
        return self.handle

    def answer(self, handle, read_len=0):
        """Read one whole reply; returns (error, data bytes or extents)."""
        data = bytearray(read_len)
        extents = []
        err = 0
        while True:
            magic = struct.unpack(">I", self.recvn(4))[0]
            if magic == SIMPLE:
                e, h = struct.unpack(">IQ", self.recvn(12))
                expect(h == handle, "reply handle %d, want %d" % (h, handle))
                if not e and read_len:
                    data = bytearray(self.recvn(read_len))
                return e, bytes(data)
            expect(magic == STRUCT, "bad reply magic %#x" % magic)
            fl, t, h, ln = struct.unpack(">HHQI", self.recvn(16))
            expect(h == handle, "chunk handle %d, want %d" % (h, handle))
            p = self.recvn(ln)
            if t == 1:  # OFFSET_DATA
                off = struct.unpack(">Q", p[:8])[0]
                data[off - self.base:off - self.base + ln - 8] = p[8:]
            elif t == 2:  # OFFSET_HOLE
                off, n = struct.unpack(">QI", p)
                data[off - self.base:off - self.base + n] = bytes(n)
            elif t == 5:  # BLOCK_STATUS
                for i in range(4, ln, 8):
                    extents.append(struct.unpack(">II", p[i:i + 8]))
            elif t & 0x8000:
                err = struct.unpack(">I", p[:4])[0]
            if fl & 1:
                return err, extents if t == 5 else bytes(data)

    def cmd(self, cmd, offset=0, length=0, flags=0, data=b""):
        self.base = offset
        h = self.request(cmd, offset, length, flags, data)
        return self.answer(h, length if cmd == CMD_READ else 0)

    def disc(self):
        self.request(CMD_DISC)
        expect(self.closed_by_server(), "server did not close after NBD_CMD_DISC")


# ------------------------------------------------------------------ checks
# Each check connects as many times as it needs; the server must still
# answer a well-behaved client afterwards (check_alive runs last in tests).

def check_alive(addr):
    c = Conn(addr)
    c.start()
    size, _ = c.go()
    e, d = c.cmd(CMD_READ, 0, 4096)
    expect(e == 0 and len(d) == 4096, "read on a fresh connection failed")
    c.disc()


def check_garbage_greeting(addr):
    # garbage instead of client flags: unknown flag bits -> hard disconnect
    c = Conn(addr)
    c.greeting()
    c.s.sendall(b"\xff\xff\xff\xffGET / HTTP/1.0\r\n\r\n")
    expect(c.closed_by_server(), "server kept a client with bad flags")
    # bad option magic
    c = Conn(addr)
    c.start()
    c.s.sendall(b"NOTMAGIC" + struct.pack(">II", 7, 0))
    expect(c.closed_by_server(), "server kept a client with bad option magic")
    # random bytes
    c = Conn(addr)
    c.greeting()
    c.s.sendall(os.urandom(4096))
    expect(c.closed_by_server(), "server kept a client sending random bytes")


def check_truncated(addr):
    # hang up at every point of the handshake; the server must not mind
    for cut in (0, 2, 4, 10, 20, 30):
        c = Conn(addr)
        c.greeting()
        msg = struct.pack(">I", 3) + struct.pack(">QII", IHAVEOPT, OPT_GO, 12) + \
            struct.pack(">I", 0) + struct.pack(">HH", 1, 3)
        c.s.sendall(msg[:cut])
        c.s.close()
    # hang up in the middle of a request header and of a write payload
    c = Conn(addr)
    c.start()
    c.go()
    c.s.sendall(struct.pack(">IHH", REQMAGIC, 0, CMD_WRITE))
    c.s.close()
    c = Conn(addr)
    c.start()
    c.go()
    c.s.sendall(struct.pack(">IHHQQI", REQMAGIC, 0, CMD_WRITE, 1, 0, 1 << 20) + b"x" * 1000)
    c.s.close()


def check_options(addr):
    c = Conn(addr)
    c.start()
    r = c.replies(99)
    expect(r[-1][0] == ERR_UNSUP, "unknown option: %#x, want ERR_UNSUP" % r[-1][0])
    r = c.replies(OPT_STARTTLS)
    expect(r[-1][0] == ERR_POLICY, "STARTTLS: %#x, want ERR_POLICY" % r[-1][0])
    r = c.replies(OPT_LIST, b"junk")
    expect(r[-1][0] == ERR_INVALID, "LIST with data: %#x, want ERR_INVALID" % r[-1][0])
    r = c.replies(OPT_STRUCTURED_REPLY, b"x")
    expect(r[-1][0] == ERR_INVALID, "STRUCTURED_REPLY with data: want ERR_INVALID")
    q = b"base:allocation"
    r = c.replies(OPT_SET_META, struct.pack(">I", 0) + struct.pack(">II", 1, len(q)) + q)
    expect(r[-1][0] == ERR_INVALID, "SET_META_CONTEXT before structured: want ERR_INVALID")
    r = c.replies(OPT_GO, struct.pack(">I", 100) + b"x")
    expect(r[-1][0] == ERR_INVALID, "GO with a bad name length: want ERR_INVALID")
    r = c.replies(OPT_GO, struct.pack(">I", 7) + b"missing" + struct.pack(">H", 0))
    expect(r[-1][0] == ERR_UNKNOWN, "GO on a missing export: %#x, want ERR_UNKNOWN" % r[-1][0])
    c.opt(OPT_INFO, b"x" * 70000)
    o, t, _ = c.reply()
    expect(t == ERR_TOO_BIG, "huge option: %#x, want ERR_TOO_BIG" % t)
    r = c.replies(OPT_STRUCTURED_REPLY)
    expect(r[-1][0] == REP_ACK, "STRUCTURED_REPLY refused")
    r = c.replies(OPT_LIST_META, struct.pack(">II", 0, 0))
    expect(r[0][0] == REP_META and r[0][1][4:] == q, "LIST_META_CONTEXT lacks base:allocation")
    # after all those errors the session still works
    c.go()
    e, _ = c.cmd(CMD_READ, 0, 512)
    expect(e == 0, "read after option errors failed")
    c.disc()
    # ABORT gets an ACK
    c = Conn(addr)
    c.start()
    r = c.replies(OPT_ABORT)
    expect(r[-1][0] == REP_ACK, "ABORT not acknowledged")
    # old-style EXPORT_NAME with NO_ZEROES: size and flags, no padding
    c = Conn(addr)
    c.start(3)
    c.opt(OPT_EXPORT_NAME, b"")
    size, fl = struct.unpack(">QH", c.recvn(10))
    expect(size > 0 and fl & 1, "EXPORT_NAME reply malformed")
    c.base = 0
    h = c.request(CMD_READ, 0, 512)
    e, _ = c.answer(h, 512)
    expect(e == 0, "read after EXPORT_NAME failed")
    # and without NO_ZEROES: 124 bytes of zeroes follow
    c = Conn(addr)
    c.start(1)
    c.opt(OPT_EXPORT_NAME, b"")
    expect(c.recvn(134)[10:] == bytes(124), "missing 124 zero bytes")
    # an unknown EXPORT_NAME ends the session (it cannot be answered)
    c = Conn(addr)
    c.start()
    c.opt(OPT_EXPORT_NAME, b"nope")
    expect(c.closed_by_server(), "unknown EXPORT_NAME did not end the session")


def check_commands(addr):
    B = BASE
    c = Conn(addr)
    c.start()
    size, tf = c.go()
    e, _ = c.cmd(CMD_READ, 0, 4096, flags=0x100)
    expect(e == EINVAL, "unknown flag: %d, want EINVAL" % e)
    e, _ = c.cmd(42, 0, 4096)
    expect(e == EINVAL, "unknown command: %d, want EINVAL" % e)
    e, _ = c.cmd(CMD_READ, size - 512, 4096)
    expect(e == EINVAL, "read past the end: %d, want EINVAL" % e)
    e, _ = c.cmd(CMD_READ, 0, 64 << 20)
    expect(e == EOVERFLOW, "64 MiB read: %d, want EOVERFLOW" % e)
    e, _ = c.cmd(CMD_WRITE, size - 512, 4096, data=b"a" * 4096)
    expect(e == ENOSPC, "write past the end: %d, want ENOSPC" % e)
    e, _ = c.cmd(CMD_WRITE, 1, 512, data=b"a" * 512)
    expect(e == EINVAL, "unaligned write: %d, want EINVAL" % e)
    e, _ = c.cmd(CMD_FLUSH, 1, 0)
    expect(e == EINVAL, "flush with an offset: %d, want EINVAL" % e)
    e, _ = c.cmd(CMD_BLOCK_STATUS, size, 512)
    expect(e == EINVAL, "block status past the end: %d, want EINVAL" % e)
    e, _ = c.cmd(CMD_WRITE_ZEROES, 0, 4096, flags=FLAG_NO_HOLE | FLAG_FAST_ZERO)
    expect(e == ENOTSUP, "NO_HOLE|FAST_ZERO: %d, want ENOTSUP" % e)
    # the connection is still usable: write, read back, status, zero
    pat = bytes(range(256)) * 32
    e, _ = c.cmd(CMD_WRITE, B, 8192, flags=FLAG_FUA, data=pat)
    expect(e == 0, "write failed: %d" % e)
    e, d = c.cmd(CMD_READ, B, 8192)
    expect(e == 0 and d == pat, "read back differs")
    e, d = c.cmd(CMD_READ, B, 8192, flags=FLAG_DF)
    expect(e == 0 and d == pat, "DF read back differs")
    e, ext = c.cmd(CMD_BLOCK_STATUS, B, 8192)
    expect(e == 0 and ext[0] == (8192, 0), "written range not reported as data: %r" % ext)
    e, _ = c.cmd(CMD_WRITE_ZEROES, B, 4096)
    expect(e == 0, "write zeroes failed")
    e, d = c.cmd(CMD_READ, B, 8192)
    expect(e == 0 and d == bytes(4096) + pat[4096:], "zeroed range reads wrong")
    e, ext = c.cmd(CMD_BLOCK_STATUS, B, 8192, flags=FLAG_REQ_ONE)
    expect(e == 0 and len(ext) == 1 and ext[0][1] == 3, "zeroed page not a hole: %r" % ext)
    e, _ = c.cmd(CMD_WRITE_ZEROES, B, 4096, flags=FLAG_NO_HOLE)
    expect(e == 0, "NO_HOLE write zeroes failed")
    e, ext = c.cmd(CMD_BLOCK_STATUS, B, 4096)
    expect(e == 0 and ext[0][1] == 0, "NO_HOLE range reported as a hole: %r" % ext)
    e, _ = c.cmd(CMD_TRIM, B, 8192, flags=FLAG_FUA)
    expect(e == 0, "trim failed")
    e, _ = c.cmd(CMD_CACHE, 0, 4096)
    expect(e == 0, "cache failed")
    e, _ = c.cmd(CMD_FLUSH)
    expect(e == 0, "flush failed")
    # a write whose payload follows a rejected header is skipped whole
    h = c.request(CMD_WRITE, size, 4096, data=b"z" * 4096)
    e, _ = c.answer(h)
    expect(e == ENOSPC, "rejected write: %d" % e)
    e, _ = c.cmd(CMD_READ, 0, 512)
    expect(e == 0, "stream lost sync after a rejected write")
    # pipelined requests: 64 reads in one send
    c.base = 0
    hs = []
    for i in range(64):
        c.handle += 1
        hs.append(c.handle)
    c.s.sendall(b"".join(struct.pack(">IHHQQI", REQMAGIC, 0, CMD_READ, h, 0, 4096) for h in hs))
    for h in hs:
        e, _ = c.answer(h, 4096)
        expect(e == 0, "pipelined read failed")
    c.disc()
    # simple replies without structured negotiation
    c = Conn(addr)
    c.start()
    c.go(structured=False, meta=False)
    e, _ = c.cmd(CMD_BLOCK_STATUS, 0, 4096)
    expect(e == EINVAL, "block status without a context: %d, want EINVAL" % e)
    e, d = c.cmd(CMD_READ, 0, 4096)
    expect(e == 0 and len(d) == 4096, "simple read failed")
    # bad request magic: the stream is lost, the server hangs up
    c.s.sendall(b"\x00" * 28)
    expect(c.closed_by_server(), "server kept a client with bad request magic")


def check_read_only(addr):
    c = Conn(addr)
    c.start()
    _, tf = c.go()
    expect(tf & 2, "READ_ONLY flag not advertised")
    e, _ = c.cmd(CMD_WRITE, 0, 512, data=b"a" * 512)
    expect(e == EPERM, "write on read-only: %d, want EPERM" % e)
    e, _ = c.cmd(CMD_TRIM, 0, 512)
    expect(e == EPERM, "trim on read-only: %d, want EPERM" % e)
    e, _ = c.cmd(CMD_READ, 0, 512)
    expect(e == 0, "read on read-only failed")
    c.disc()


def check_write_then_cut(addr):
    """Acknowledged writes, then a hang-up in the middle of a large write."""
    c = Conn(addr)
    c.start()
    c.go()
    pat = b"ACKED" * 819 + b"!"  # 4096 bytes
    for i in range(16):
        e, _ = c.cmd(CMD_WRITE, i * 4096, 4096, data=pat)
        expect(e == 0, "write %d failed" % i)
    c.s.sendall(struct.pack(">IHHQQI", REQMAGIC, 0, CMD_WRITE, 99, 1 << 20, 16 << 20))
    c.s.sendall(b"\xee" * (3 << 20))
    c.s.close()


def check_acked_intact(addr):
    c = Conn(addr)
    c.start()
    c.go()
    pat = b"ACKED" * 819 + b"!"
    e, d = c.cmd(CMD_READ, 0, 16 * 4096)
    expect(e == 0 and d == pat * 16, "acknowledged writes lost")
    c.disc()


def check_big_pipeline(addr):
    """8 pipelined 32 MiB writes: more than a connection's 64 MiB data
    budget, so the server must stop parsing and resume without deadlock."""
    c = Conn(addr)
    c.start()
    c.go()
    c.s.settimeout(60)
    MB32 = 32 << 20
    hs = []
    for i in range(8):
        c.handle += 1
        hs.append(c.handle)
        c.s.sendall(struct.pack(">IHHQQI", REQMAGIC, 0, CMD_WRITE, c.handle,
                                (i % 2) * MB32, MB32) + bytes([i]) * MB32)
    for h in hs:
        e, _ = c.answer(h)
        expect(e == 0, "pipelined 32 MiB write failed: %d" % e)
    for i in (0, 1):
        e, d = c.cmd(CMD_READ, i * MB32, MB32)
        expect(e == 0 and d == bytes([6 + i]) * MB32, "32 MiB read back differs")
    c.disc()


def check_half_close(addr):
    """Pipelined reads (more than the 64 slots' worth, so some wait in the
    receive buffer), optionally a DISC, then shutdown(SHUT_WR): a client
    that half-closes still reads, and every request sent before it must
    be answered.  The server used to stop at the EOF with most replies
    unsent, and to leave a DISC queued behind full slots unparsed."""
    MB = 1 << 20
    base = 8 * MB
    c = Conn(addr)
    c.start()
    c.go()
    pat = os.urandom(MB)
    e, _ = c.cmd(CMD_WRITE, base, MB, data=pat)
    expect(e == 0, "write failed: %d" % e)
    c.disc()
    for disc in (True, False):
        c = Conn(addr)
        c.start()
        c.go()
        c.s.settimeout(30)
        n = 80
        first = c.handle + 1
        reqs = b""
        for i in range(n):
            c.handle += 1
            reqs += struct.pack(">IHHQQI", REQMAGIC, 0, CMD_READ, c.handle, base, MB)
        if disc:
            reqs += struct.pack(">IHHQQI", REQMAGIC, 0, CMD_DISC, 0, 0, 0)
        c.s.sendall(reqs)
        c.s.shutdown(socket.SHUT_WR)
        time.sleep(0.3)  # let the server see the EOF with replies queued
        c.base = base
        for i in range(n):
            try:
                e, d = c.answer(first + i, MB)
            except EOFError:
                raise Fail("half-close%s: EOF after %d of %d replies" %
                           (" after DISC" if disc else "", i, n))
            expect(e == 0 and d == pat, "reply %d wrong after a half-close" % i)
        expect(c.closed_by_server(), "server did not close after the half-close")


def check_idle_conn(addr):
    """Open a connection and keep it open (for the shutdown test)."""
    c = Conn(addr)
    c.start()
    c.go()
    time.sleep(30)


def check_idle_io(addr):
    """Write, stay idle (until the file NBD_WAIT_FILE exists, or for
    NBD_IDLE_S seconds), then read back and write and read again: the
    device keeps (or regains) its connection while the client says
    nothing (iSCSI keep-alive, test_iscsi_keepalive.sh)."""
    c = Conn(addr)
    c.start()
    c.go()
    c.s.settimeout(60)
    a = bytes((BASE + i) % 251 for i in range(8192))
    e, _ = c.cmd(CMD_WRITE, BASE, len(a), data=a)
    expect(e == 0, "write before the idle time failed: %d" % e)
    wait = os.environ.get("NBD_WAIT_FILE")
    end = time.time() + float(os.environ.get("NBD_IDLE_S", "3"))
    while (wait and not os.path.exists(wait)) or (not wait and time.time() < end):
        time.sleep(0.05)
    e, d = c.cmd(CMD_READ, BASE, len(a))
    expect(e == 0 and d == a, "read after the idle time: error %d or other data" % e)
    b = a[::-1]
    e, _ = c.cmd(CMD_WRITE, BASE, len(b), data=b)
    expect(e == 0, "write after the idle time failed: %d" % e)
    e, d = c.cmd(CMD_READ, BASE, len(b))
    expect(e == 0 and d == b, "read of the write after the idle time: error %d or other data" % e)
    c.disc()


def main():
    global EXPORT
    addr, name = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        EXPORT = sys.argv[3].encode()
    try:
        globals()["check_" + name](addr)
    except (Fail, EOFError, OSError, struct.error) as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
