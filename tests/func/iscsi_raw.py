#!/usr/bin/env python3
"""Raw iSCSI wire checks against blkstack serve --iscsi (RFC 7143).

usage: iscsi_raw.py HOST:PORT CHECK TARGET
Prints one line and exits 0 when the server behaved, 1 otherwise.
"""
import socket
import struct
import sys
import time

ISID = bytes([0x80, 0x12, 0x34, 0x56, 0x00, 0x00])


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


CRC_TABLE = _crc_table()


def crc32c(b):
    """CRC32C as iSCSI's digests (RFC 3720 B.4), bytes as on the wire."""
    c = 0xFFFFFFFF
    for x in b:
        c = CRC_TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return struct.pack("<I", c ^ 0xFFFFFFFF)


def pad(b):
    return b + b"\0" * (-len(b) % 4)


def bhs(op, flags, dsl=0, lun=0, itt=0, f20=0, f24=0, f28=0, rest=b""):
    h = struct.pack(">BB2xB3sQIIII", op, flags, 0, dsl.to_bytes(3, "big"),
                    lun, itt, f20, f24, f28)
    return h + rest.ljust(48 - len(h), b"\0")


def login_pdu(keys, flags=0x80 | 0x01 << 2 | 0x03, cmdsn=1, isid=ISID, tsih=0,
              cid=1):
    data = b"".join(k.encode() + b"\0" for k in keys)
    h = bytearray(48)
    h[0] = 0x43
    h[1] = flags
    h[5:8] = len(data).to_bytes(3, "big")
    h[8:14] = isid
    struct.pack_into(">H", h, 14, tsih)      # TSIH
    struct.pack_into(">I", h, 16, 0x11)      # ITT
    struct.pack_into(">H", h, 20, cid)       # CID
    struct.pack_into(">I", h, 24, cmdsn)     # CmdSN
    return bytes(h) + pad(data)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


def recv_pdu(s):
    h = recv_exact(s, 48)
    ahs = h[4] * 4
    dsl = int.from_bytes(h[5:8], "big")
    rest = recv_exact(s, ahs + dsl + (-dsl % 4))
    return h, rest[ahs:ahs + dsl]


def closed(s, timeout=5):
    """True when the server closes the connection (after any PDUs)."""
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(4096):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def connect(addr):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    return s


def login(addr, target, extra=(), isid=ISID):
    s = connect(addr)
    s.sendall(login_pdu(["InitiatorName=iqn.2026-12.org.blkstack:raw",
                         "TargetName=" + target, "SessionType=Normal",
                         "InitialR2T=No", "ImmediateData=No"] + list(extra),
                        isid=isid))
    h, data = recv_pdu(s)
    if h[0] != 0x23 or h[36] != 0 or not h[1] & 0x80:
        raise RuntimeError("login failed: status %02x%02x" % (h[36], h[37]))
    statsn, expcmdsn = struct.unpack(">II", h[24:32])
    return s, expcmdsn, statsn


def login_mcs(addr, target, isid, tsih=0, cid=1, cmdsn=1, extra=()):
    """A Login of a normal session in one request (operational stage to
    full feature phase): a new session (@tsih 0) or a connection added to
    session @tsih (RFC 7143 6.3.1) with connection ID @cid.  Returns the
    socket (None when refused), the status (class << 8 | detail), the
    TSIH, ExpCmdSN and the answered keys."""
    s = connect(addr)
    s.sendall(login_pdu(["InitiatorName=iqn.2026-12.org.blkstack:raw-mcs",
                         "TargetName=" + target, "SessionType=Normal",
                         "InitialR2T=No", "ImmediateData=Yes"] + list(extra),
                        isid=isid, tsih=tsih, cid=cid, cmdsn=cmdsn))
    h, data = recv_pdu(s)
    status = h[36] << 8 | h[37]
    keys = dict(kv.split("=", 1) for kv in data.decode().split("\0") if kv)
    tsih, = struct.unpack(">H", h[14:16])
    expcmdsn, = struct.unpack(">I", h[28:32])
    if status:
        s.close()
        s = None
    return s, status, tsih, expcmdsn, keys


def scsi_rsp(s, itt):
    """Read PDUs up to the status of @itt (Data-In with S, or a SCSI
    Response): (status, data, ExpCmdSN, MaxCmdSN, StatSN)."""
    data = b""
    while True:
        h, d = recv_pdu(s)
        if struct.unpack(">I", h[16:20])[0] != itt or h[0] not in (0x21, 0x25):
            raise RuntimeError("opcode %02x itt %d while waiting for itt %d" %
                               (h[0], struct.unpack(">I", h[16:20])[0], itt))
        data += d
        if h[0] == 0x21 or h[1] & 1:
            statsn, exp, mx = struct.unpack(">III", h[24:36])
            return h[3], data, exp, mx, statsn


def tur(s, itt, cmdsn, immediate=False):
    s.sendall(bhs(0x41 if immediate else 0x01, 0x80, itt=itt, f24=cmdsn,
                  rest=bytes(16)))


def logout(s, itt, cmdsn, reason, cid=0):
    """Logout Request, immediate: its response (opcode, response, CmdSNs)."""
    s.sendall(bhs(0x46, 0x80 | reason, itt=itt, f20=cid << 16, f24=cmdsn))
    h, _ = recv_pdu(s)
    exp, = struct.unpack(">I", h[28:32])
    return h[0], h[2], exp


def settle(s, cmdsn, itt=0x900):
    """TEST UNIT READY until GOOD: the nexus's pending unit attentions
    (POWER ON, MODE PARAMETERS CHANGED ...) taken.  The next CmdSN."""
    for i in range(8):
        tur(s, itt + i, cmdsn)
        st, _, _, _, _ = scsi_rsp(s, itt + i)
        cmdsn += 1
        if st == 0:
            return cmdsn
    raise RuntimeError("TEST UNIT READY never GOOD")


def quiet(s, secs):
    """True when nothing arrives on @s for @secs."""
    s.settimeout(secs)
    try:
        s.recv(1, socket.MSG_PEEK)
        return False  # a byte, or the end of the stream
    except socket.timeout:
        return True
    finally:
        s.settimeout(10)


def mcs(addr, target, what):
    """Several connections per session (RFC 7143 MaxConnections > 1)."""
    isid = bytes([0x80, 0, 0, 0, 0x4d, {"mcs_io": 1, "mcs_limits": 2,
                                       "mcs_logout_session": 3,
                                       "mcs_reinstate": 4,
                                       "mcs_logout_other": 5,
                                       "mcs_abort": 6}[what]])
    notes = []

    def want(cond, msg):
        notes.append(("ok " if cond else "FAILED ") + msg)
        return cond

    if what == "mcs_io":
        a, st, tsih, e, keys = login_mcs(addr, target, isid, extra=["MaxConnections=4"])
        ok = want(st == 0 and keys.get("MaxConnections") == "4" and tsih != 0,
                  "leading login: MaxConnections=%s tsih %d" % (keys.get("MaxConnections"), tsih))
        b, st, tsih_b, _, keys = login_mcs(addr, target, isid, tsih=tsih, cid=2,
                                           cmdsn=e, extra=["MaxConnections=4"])
        ok &= want(st == 0 and tsih_b == tsih and keys.get("MaxConnections") == "Irrelevant",
                   "second connection: status %04x tsih %d MaxConnections=%s" % (
                       st, tsih_b, keys.get("MaxConnections")))
        if not ok:
            return False, "; ".join(notes)
        tur(a, 1, e)  # the nexus's POWER ON unit attention, on A
        st, _, exp, _, _ = scsi_rsp(a, 1)
        ok &= want(st == 2 and exp == e + 1, "TUR on A: status %02x ExpCmdSN %d (want %d)" % (st, exp, e + 1))
        # the unit attentions are the nexus's, one for the session: once
        # A has taken them, B has none
        e = settle(a, e + 1) - 1
        block = bytes((i * 13 + 5) & 0xff for i in range(512))
        cdb = bytes([0x2a, 0, 0, 0, 0, 60, 0, 0, 1, 0]).ljust(16, b"\0")
        b.sendall(bhs(0x01, 0xa1, dsl=512, itt=2, f20=512, f24=e + 1, rest=cdb) + block)
        st, _, exp, _, _ = scsi_rsp(b, 2)
        ok &= want(st == 0 and exp == e + 2,
                   "WRITE on B: status %02x ExpCmdSN %d (want %d: the session's)" % (st, exp, e + 2))
        cdb = bytes([0x28, 0, 0, 0, 0, 60, 0, 0, 1, 0]).ljust(16, b"\0")
        a.sendall(bhs(0x01, 0xc1, itt=3, f20=512, f24=e + 2, rest=cdb))
        st, data, exp, _, _ = scsi_rsp(a, 3)
        ok &= want(st == 0 and data == block and exp == e + 3,
                   "READ on A: status %02x data %s ExpCmdSN %d" % (
                       st, "as written on B" if data == block else "DIFFERS", exp))
        # B's CmdSN ahead of the session's ExpCmdSN (A holds the gap): not
        # dropped, not run before A's, answered on B once A's came
        tur(b, 4, e + 4)
        early = not quiet(b, 0.5)
        tur(a, 5, e + 3)
        st_a, _, exp_a, _, _ = scsi_rsp(a, 5)
        st_b, _, exp_b, _, _ = scsi_rsp(b, 4)
        ok &= want(not early and st_a == 0 and st_b == 0 and exp_b == e + 5,
                   "CmdSN %d on B before %d on A: %s, then both answered (%02x, %02x), B's ExpCmdSN %d" % (
                       e + 4, e + 3, "answered early" if early else "held", st_a, st_b, exp_b))
        # interleaved: A carries the even, B the odd of 16 CmdSNs, A's sent
        # first (each of A's waits for B's before it)
        n0 = e + 5
        for i in range(0, 16, 2):
            tur(a, 100 + i, n0 + i)
        for i in range(1, 16, 2):
            tur(b, 100 + i, n0 + i)
        got = []
        for i in range(16):
            st, _, exp, mx, _ = scsi_rsp(a if i % 2 == 0 else b, 100 + i)
            got.append(st)
        ok &= want(got == [0] * 16 and exp == n0 + 16,
                   "16 interleaved CmdSNs: statuses %s, last ExpCmdSN %d (want %d)" % (
                       "all GOOD" if got == [0] * 16 else got, exp, n0 + 16))
        n = n0 + 16
        # logout of B (reason 1): A goes on
        op, resp, _ = logout(b, 7, n, 1, cid=2)
        gone = closed(b, timeout=5)
        ok &= want(op == 0x26 and resp == 0 and gone,
                   "Logout (connection) of B: %02x/%d, closed %s" % (op, resp, gone))
        tur(a, 8, n)
        st, _, exp, _, _ = scsi_rsp(a, 8)
        ok &= want(st == 0 and exp == n + 1, "A after it: TUR %02x ExpCmdSN %d" % (st, exp))
        op, resp, _ = logout(a, 9, n + 1, 0)
        gone = closed(a, timeout=5)
        ok &= want(op == 0x26 and resp == 0 and gone,
                   "Logout (session) on A: %02x/%d, closed %s" % (op, resp, gone))
        return ok, "; ".join(notes)
    if what == "mcs_limits":
        a, st, tsih, e, keys = login_mcs(addr, target, isid, extra=["MaxConnections=2"])
        ok = want(st == 0 and keys.get("MaxConnections") == "2", "MaxConnections=2 offered: %s" % keys.get("MaxConnections"))
        b, st, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=2, cmdsn=e)
        ok &= want(st == 0, "second connection: %04x" % st)
        c, st, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=3, cmdsn=e)
        ok &= want(st == 0x0206, "a third (past MaxConnections): %04x (want 0206)" % st)
        other = bytes([0x80, 0, 0, 0, 0x4d, 0x22])
        c, st, _, _, _ = login_mcs(addr, target, other, tsih=tsih, cid=3, cmdsn=e)
        ok &= want(st == 0x020a, "its TSIH with another ISID: %04x (want 020a)" % st)
        c, st, _, _, _ = login_mcs(addr, target, isid, tsih=(tsih + 100) & 0xffff or 1, cid=3, cmdsn=e)
        ok &= want(st == 0x020a, "a TSIH of no session: %04x (want 020a)" % st)
        d, st, _, _, keys = login_mcs(addr, target, other, extra=["MaxConnections=100"])
        ok &= want(st == 0 and keys.get("MaxConnections") == "8",
                   "MaxConnections=100 offered: %s (want our 8)" % keys.get("MaxConnections"))
        # the same CID again: connection reinstatement (6.3.4), the old
        # one closed, the new one serves
        b2, st, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=2, cmdsn=e)
        gone = closed(b, timeout=5)
        ok &= want(st == 0 and gone, "CID 2 again: %04x, the old CID 2 closed %s" % (st, gone))
        if b2:
            tur(b2, 1, e)
            st, _, exp, _, _ = scsi_rsp(b2, 1)
            ok &= want(st == 2 and exp == e + 1, "the new CID 2 serves: TUR %02x ExpCmdSN %d" % (st, exp))
        return ok, "; ".join(notes)
    if what == "mcs_abort":
        # on a unit whose reads take 1 s: ABORT TASK on A of B's READ
        # (11.5.1: any connection of the session), then a LOGICAL UNIT
        # RESET on A with B's READ in flight: complete, and B sends
        # nothing for either READ (the session's own function ended them)
        a, st, tsih, e, _ = login_mcs(addr, target, isid, extra=["MaxConnections=2"])
        b, st_b, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=2, cmdsn=e)
        if st or st_b:
            return False, "logins: %04x %04x" % (st, st_b)
        e = settle(a, e)
        read = bytes([0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0]).ljust(16, b"\0")
        ok = True
        for func, name in ((1, "ABORT TASK"), (5, "LOGICAL UNIT RESET")):
            b.sendall(bhs(0x01, 0xc1, itt=50 + func, f20=512, f24=e, rest=read))
            time.sleep(0.3)  # in the core, at the device
            t0 = time.monotonic()
            a.sendall(bhs(0x42, 0x80 | func, itt=60 + func, f20=50 + func,
                          f24=e + 1, rest=struct.pack(">I", e)))
            h, _ = recv_pdu(a)
            took = time.monotonic() - t0
            ok &= want(h[0] == 0x22 and h[2] == 0 and struct.unpack(">I", h[16:20])[0] == 60 + func,
                       "%s on A of B's READ: %02x/%d after %.2f s" % (name, h[0], h[2], took))
            ok &= want(quiet(b, 1.2), "B: no response for the READ %s ended" % name)
            e += 1
            e = settle(b, e)
        return ok, "; ".join(notes)
    if what in ("mcs_logout_session", "mcs_reinstate", "mcs_logout_other"):
        a, st, tsih, e, _ = login_mcs(addr, target, isid, extra=["MaxConnections=3"])
        b, st_b, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=2, cmdsn=e)
        c, st_c, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=3, cmdsn=e)
        ok = want(st == 0 and st_b == 0 and st_c == 0, "three connections: %04x %04x %04x" % (st, st_b, st_c))
        if not ok:
            return False, "; ".join(notes)
        e = settle(c, e) - 1
        if what == "mcs_logout_session":
            # Logout reason 0 on B: the session ends, A and C with it
            op, resp, exp = logout(b, 2, e + 1, 0)
            gb, ga, gc = closed(b, 5), closed(a, 5), closed(c, 5)
            ok &= want(op == 0x26 and resp == 0 and exp == e + 1 and ga and gb and gc,
                       "Logout (session) on B: %02x/%d ExpCmdSN %d; closed: A %s B %s C %s" % (
                           op, resp, exp, ga, gb, gc))
            d, st, _, _, _ = login_mcs(addr, target, isid, tsih=tsih, cid=4, cmdsn=e)
            ok &= want(st == 0x020a, "a connection added to it afterwards: %04x (want 020a)" % st)
        elif what == "mcs_logout_other":
            # Logout reason 1 on A for CID 3: C ends; A and B go on
            op, resp, _ = logout(a, 2, e + 1, 1, cid=3)
            gc = closed(c, 5)
            ok &= want(op == 0x26 and resp == 0 and gc,
                       "Logout (connection) of CID 3 asked on A: %02x/%d, C closed %s" % (op, resp, gc))
            op, resp, _ = logout(a, 3, e + 1, 1, cid=9)
            ok &= want(op == 0x26 and resp == 1, "of CID 9: %02x/%d (want 1: CID not found)" % (op, resp))
            tur(a, 4, e + 1)
            tur(b, 5, e + 2)
            st_a, _, _, _, _ = scsi_rsp(a, 4)
            st_b, _, exp, _, _ = scsi_rsp(b, 5)
            ok &= want(st_a == 0 and st_b == 0 and exp == e + 3,
                       "A and B serve on: %02x %02x ExpCmdSN %d" % (st_a, st_b, exp))
        else:
            # a new session of the same initiator port (TSIH 0): every
            # connection of the old one ends (6.3.5)
            n, st, tsih2, e2, _ = login_mcs(addr, target, isid)
            ga, gb, gc = closed(a, 10), closed(b, 5), closed(c, 5)
            ok &= want(st == 0 and tsih2 != tsih and ga and gb and gc,
                       "reinstatement: %04x tsih %d -> %d; closed: A %s B %s C %s" % (
                           st, tsih, tsih2, ga, gb, gc))
            if n:
                tur(n, 1, e2)
                st, d, _, _, _ = scsi_rsp(n, 1)
                asc = (d[4] & 0x0f, d[14], d[15]) if len(d) >= 16 else None
                ok &= want(st == 2 and asc == (6, 0x29, 0x07),
                           "the new session serves: TUR %02x sense %s (want 6/29/07: the old nexus was lost)" % (st, asc))
        return ok, "; ".join(notes)
    return False, "unknown check " + what


def check(addr, what, target):
    if what == "login_at_stop":
        # the Login Request half sent, the server told to stop (SIGTERM to
        # $STOP_PID), then the rest: refused with 0301 (service
        # unavailable), then the close; no session that would be asked
        # to log out at once
        import os
        import signal
        s = connect(addr)
        p = login_pdu(["InitiatorName=iqn.2026-12.org.blkstack:raw",
                       "TargetName=" + target, "SessionType=Normal"])
        s.sendall(p[:24])
        time.sleep(0.3)
        os.kill(int(os.environ["STOP_PID"]), signal.SIGTERM)
        time.sleep(0.5)
        s.sendall(p[24:])
        h, _ = recv_pdu(s)
        ok = h[0] == 0x23 and (h[36], h[37]) == (3, 1) and closed(s)
        return ok, "status %02x%02x (want 0301, then close)" % (h[36], h[37])
    if what == "login_missing_initiator":
        s = connect(addr)
        s.sendall(login_pdu(["TargetName=" + target]))
        h, _ = recv_pdu(s)
        ok = h[0] == 0x23 and (h[36], h[37]) == (2, 7) and closed(s)
        return ok, "status %02x%02x (want 0207, then close)" % (h[36], h[37])
    if what == "login_unknown_target":
        s = connect(addr)
        s.sendall(login_pdu(["InitiatorName=iqn.x:y", "TargetName=iqn.2026-12.org.blkstack:nope"]))
        h, _ = recv_pdu(s)
        ok = (h[36], h[37]) == (2, 3) and closed(s)
        return ok, "status %02x%02x (want 0203)" % (h[36], h[37])
    if what == "login_bad_version":
        s = connect(addr)
        p = bytearray(login_pdu(["InitiatorName=iqn.x:y", "SessionType=Discovery"]))
        p[3] = 1  # Version-min
        s.sendall(bytes(p))
        h, _ = recv_pdu(s)
        ok = (h[36], h[37]) == (2, 5)
        return ok, "status %02x%02x (want 0205)" % (h[36], h[37])
    if what == "login_not_login_pdu":
        s = connect(addr)
        s.sendall(bhs(0x40, 0x80, itt=1))  # NOP-Out during login
        return closed(s), "connection closed on a NOP-Out before login"
    if what == "login_huge_text":
        # a data segment over 8192 bytes during login: refused unread
        s = connect(addr)
        p = bytearray(login_pdu(["InitiatorName=iqn.x:y"]))
        p[5:8] = ((1 << 24) - 1).to_bytes(3, "big")
        s.sendall(bytes(p[:48]))
        return closed(s), "connection closed on a 16 MiB - 1 login data segment"
    if what == "unknown_key":
        s = connect(addr)
        s.sendall(login_pdu(["InitiatorName=iqn.x:y", "SessionType=Discovery",
                             "X-org.example.nope=1", "MaxBurstLength=100"]))
        h, data = recv_pdu(s)
        keys = dict(kv.split("=", 1) for kv in data.decode().split("\0") if kv)
        ok = (h[36] == 0 and keys.get("X-org.example.nope") == "NotUnderstood"
              and keys.get("MaxBurstLength") == "Reject")
        return ok, "answers %s" % keys
    if what == "data_digest":
        # DataDigest=CRC32C: a NOP-Out with the right digest is echoed
        # with the right digest; a wrong one gets Reject 0x02
        s, cmdsn, statsn = login(addr, target, ["DataDigest=CRC32C"])
        ping = pad(b"digest me")
        s.sendall(bhs(0x40, 0x80, dsl=9, itt=7, f20=0xffffffff, f24=cmdsn) +
                  ping + crc32c(ping))
        h = recv_exact(s, 48)
        dsl = int.from_bytes(h[5:8], "big")
        data = recv_exact(s, dsl + (-dsl % 4))
        dd = recv_exact(s, 4)
        ok1 = h[0] == 0x20 and data[:dsl] == b"digest me" and dd == crc32c(data)
        s.sendall(bhs(0x40, 0x80, dsl=9, itt=8, f20=0xffffffff, f24=cmdsn) +
                  ping + b"\0\0\0\0")
        h2 = recv_exact(s, 48)
        ok = ok1 and h2[0] == 0x3f and h2[2] == 0x02
        return ok, "echo with digest %s, then opcode %02x reason %02x" % (ok1, h2[0], h2[2])
    if what == "data_digest_data_out":
        # DataDigest=CRC32C and a Data-Out whose digest is wrong: Reject
        # 0x02 (data digest error), the PDU discarded, and the task ends
        # with 0B/47/05 once its burst ended (RFC 7143 7.8.1 b)
        s, cmdsn, _ = login(addr, target, ["DataDigest=CRC32C"])
        return bad_data_out(s, cmdsn, [(0, False), (1, True)], "data digest", digest=True)
    if what == "reinstate":
        # a second login with the same InitiatorName and ISID ends the
        # first session (6.3.5); the new one works
        s1, _, _ = login(addr, target)
        s2, cmdsn, _ = login(addr, target)
        gone = closed(s1, timeout=10)
        s2.sendall(bhs(0x40, 0x80, itt=21, f20=0xffffffff, f24=cmdsn))
        h, _ = recv_pdu(s2)
        ok = gone and h[0] == 0x20
        return ok, "old session closed %s, new answers NOP %02x" % (gone, h[0])
    if what == "r2t_flow":
        return r2t_flow(addr, target)
    if what == "clear_task_set":
        return tmf_other_nexus(addr, target, 4, (0x2f, 0x00))
    if what == "lun_reset_tas":
        return tmf_other_nexus(addr, target, 5, (0x29, 0x03))
    if what.startswith("mcs_"):
        return mcs(addr, target, what)
    if what.startswith("nopin_"):
        return nopin(addr, target, what)
    if what == "stop_logout":
        s, cmdsn, _ = login(addr, target, isid=bytes([0x80, 0, 0, 0, 0x0e, 1]))
        return stop_logout(s, cmdsn)
    s, cmdsn, statsn = login(addr, target)
    if what == "nop":
        s.sendall(bhs(0x00, 0x80, dsl=5, itt=7, f20=0xffffffff, f24=cmdsn) + pad(b"hello"))
        h, data = recv_pdu(s)
        ok = h[0] == 0x20 and struct.unpack(">I", h[16:20])[0] == 7 and data == b"hello"
        return ok, "NOP-In itt %d data %r" % (struct.unpack(">I", h[16:20])[0], data)
    if what == "data_over_max":
        # DataSegmentLength over our MaxRecvDataSegmentLength (262144)
        s.sendall(bhs(0x01, 0xa0, dsl=(1 << 24) - 1, itt=1, f20=512, f24=cmdsn))
        h, _ = recv_pdu(s)
        ok = h[0] == 0x3f and h[2] == 0x04 and closed(s)
        return ok, "Reject reason %02x then close" % h[2]
    if what == "unknown_opcode":
        s.sendall(bhs(0x40 | 0x1c, 0x80, dsl=4, itt=1, f24=cmdsn) + b"abcd")
        h, _ = recv_pdu(s)
        ok1 = h[0] == 0x3f and h[2] == 0x05
        # the connection goes on
        s.sendall(bhs(0x40, 0x80, itt=9, f20=0xffffffff, f24=cmdsn))
        h2, _ = recv_pdu(s)
        ok = ok1 and h2[0] == 0x20
        return ok, "Reject reason %02x, then NOP-In %02x" % (h[2], h2[0])
    if what == "datasn_gap":
        # WRITE(10) of 2 blocks at LBA 40, no immediate data, unsolicited
        # Data-Out with DataSN 0 then 5: PDUs went missing (RFC 7143 7.9),
        # so the task ends with CHECK CONDITION, ABORTED COMMAND, PROTOCOL
        # SERVICE CRC ERROR (7.8.1 b) once its burst ended; nothing was
        # written and the connection goes on
        return bad_data_out(s, cmdsn, [(0, False), (5, False)], "DataSN gap")
    if what == "datasn_reversed":
        # the same with DataSN 1 then 0 (libiscsi's iSCSIDataSnInvalid)
        return bad_data_out(s, cmdsn, [(1, False), (0, False)], "DataSN 1, 0")
    if what == "cmdsn_outside_window":
        # a TEST UNIT READY far ahead of the window is dropped; the next
        # in-window command is answered
        tur = bytes(16)
        s.sendall(bhs(0x01, 0x80, itt=4, f24=cmdsn + 1000, rest=tur))
        s.sendall(bhs(0x01, 0x80, itt=5, f24=cmdsn, rest=tur))
        h, _ = recv_pdu(s)
        itt = struct.unpack(">I", h[16:20])[0]
        return h[0] == 0x21 and itt == 5, "first answer itt %d (want 5)" % itt
    if what == "hold":
        return hold(s, cmdsn, statsn)
    if what == "maxcmdsn_immediate":
        return maxcmdsn_immediate(s, cmdsn)
    if what == "read_error_no_stale_data":
        return read_error_no_stale_data(s, cmdsn)
    if what == "abort_task_not_received":
        return abort_task_not_received(s, cmdsn)
    if what == "abort_task_set_no_lun":
        # ABORT TASK SET of a LUN the target has not: "LUN does not
        # exist" (RFC 7143 11.6.1, 2), as CLEAR TASK SET and LUN RESET
        s.sendall(bhs(0x42, 0x80 | 2, lun=5 << 48, itt=0x60,
                      f20=0xFFFFFFFF, f24=cmdsn))
        h, _ = recv_pdu(s)
        return h[0] == 0x22 and h[2] == 2, \
            "opcode %02x response %d (want 22, 2)" % (h[0], h[2])
    return False, "unknown check " + what


def sn_lt(a, b):
    """Serial number arithmetic (RFC 1982, 32 bits): a < b."""
    return a != b and (b - a) & 0xFFFFFFFF < 0x80000000


def maxcmdsn_immediate(s, cmdsn):
    """MaxCmdSN never goes backwards (RFC 7143 4.2.2.1) while an
    immediate command is held: an immediate WRITE waits for its Data-Out
    (R2T answered never), then non-immediate WRITEs fill the window the
    responses announced, each held for its R2T.  Every R2T's MaxCmdSN
    must be at least the highest seen, and every command inside it taken
    (an initiator ignores a lower MaxCmdSN and sends up to the higher)."""
    def write10(itt, sn, imm, lba):
        cdb = bytes([0x2A, 0, 0, 0, 0, lba, 0, 0, 1, 0]) + bytes(6)
        s.sendall(bhs(0x41 if imm else 0x01, 0x80 | 0x20, itt=itt, f20=512,
                      f24=sn, rest=cdb))

    tur(s, 0x100, cmdsn)
    _, _, _, top, _ = scsi_rsp(s, 0x100)
    cmdsn += 1
    write10(0x200, cmdsn, True, 1)
    n = 0
    while True:
        h, _ = recv_pdu(s)
        itt, = struct.unpack(">I", h[16:20])
        mx, = struct.unpack(">I", h[32:36])
        if h[0] != 0x31:
            return False, "opcode %02x itt %#x, not an R2T" % (h[0], itt)
        if sn_lt(mx, top):
            return False, ("R2T for itt %#x: MaxCmdSN %d after %d" %
                           (itt, mx, top))
        top = mx
        if sn_lt(top, cmdsn):
            return True, "%d WRITEs held beside the immediate one, " \
                "MaxCmdSN never lower (%d)" % (n, top)
        write10(0x300 + n, cmdsn, False, 2 + n)
        s.settimeout(5)
        cmdsn += 1
        n += 1


def read_error_no_stale_data(s, cmdsn):
    """A READ that fails (LBA out of range: CHECK CONDITION) right after
    one that read data on the same connection: no Data-In (the target
    reuses the first command's task and buffer; its bytes were sent as
    the failed READ's data), the whole expected length as the residual
    underflow (nothing moved), the sense in the SCSI Response."""
    pat = bytes(range(256)) * 16                     # 4 KiB, not zeros
    cmdsn = settle(s, cmdsn)
    cdb = bytes([0x2A, 0, 0, 0, 0, 8, 0, 0, 8, 0]) + bytes(6)
    s.sendall(bhs(0x01, 0x80 | 0x20, itt=0x20, f20=4096, f24=cmdsn, rest=cdb))
    h, _ = recv_pdu(s)
    if h[0] != 0x31:
        return False, "WRITE: opcode %02x, not an R2T" % h[0]
    s.sendall(bhs(0x05, 0x80, dsl=4096, itt=0x20, f20=struct.unpack(
        ">I", h[20:24])[0]) + pat)
    st, _, _, _, _ = scsi_rsp(s, 0x20)
    if st:
        return False, "WRITE: status %02x" % st
    cmdsn += 1
    for itt, lba in ((0x21, 8), (0x22, 0xFFFFFFF0)):
        cdb = bytes([0x28, 0]) + struct.pack(">I", lba) + bytes([0, 0, 8, 0])
        s.sendall(bhs(0x01, 0x80 | 0x40, itt=itt, f20=4096, f24=cmdsn,
                      rest=cdb + bytes(6)))
        cmdsn += 1
        data = b""
        while True:
            h, d = recv_pdu(s)
            if h[0] == 0x25:
                data += d
                if h[1] & 1:
                    break
            else:
                break
        if itt == 0x21 and data != pat:
            return False, "the READ of the written block: %d bytes, not " \
                "the pattern" % len(data)
    resid, = struct.unpack(">I", h[44:48])
    if h[0] != 0x21 or h[3] != 0x02:
        return False, "READ past the end: opcode %02x status %02x, not " \
            "a SCSI Response with CHECK CONDITION" % (h[0], h[3])
    if data:
        return False, "READ past the end: %d bytes of Data-In%s" % (
            len(data), " (the previous READ's data)" if pat[:len(data)] ==
            data else "")
    if not h[1] & 0x02 or resid != 4096:
        return False, "READ past the end: flags %02x residual %d, want " \
            "underflow 4096" % (h[1], resid)
    return True, "CHECK CONDITION with no Data-In, residual underflow 4096"


def abort_task_not_received(s, cmdsn):
    """ABORT TASK of a task the target has not (RFC 7143 11.6.1): with
    RefCmdSN outside the window, "Task does not exist" (c); with RefCmdSN
    the ExpCmdSN, before the request's CmdSN, "Function complete" and the
    CmdSN considered received (b): the command coming late is dropped (a
    TEST UNIT READY here, it would be a WRITE the initiator thinks
    aborted), and the next CmdSN is taken, not held behind it."""
    def abort(itt, ref_itt, ref_sn, sn):
        s.sendall(bhs(0x42, 0x80 | 1, itt=itt, f20=ref_itt, f24=sn,
                      rest=struct.pack(">II", ref_sn, 0)))
        h, _ = recv_pdu(s)
        if h[0] != 0x22:
            raise RuntimeError("opcode %02x, not a TMF response" % h[0])
        return h[2]

    cmdsn = settle(s, cmdsn)
    r = abort(0x60, 0x4000, cmdsn + 100000, cmdsn)
    if r != 1:
        return False, "RefCmdSN outside the window: response %d, want 1" % r
    r = abort(0x61, 0x4001, cmdsn, cmdsn + 1)
    if r != 0:
        return False, "RefCmdSN = ExpCmdSN: response %d, want 0" % r
    tur(s, 0x4001, cmdsn)                  # the aborted one, late
    tur(s, 0x62, cmdsn + 1)
    s.settimeout(5)
    h, _ = recv_pdu(s)
    itt, = struct.unpack(">I", h[16:20])
    if itt != 0x62:
        return False, "the aborted command ran (itt %#x answered first)" % itt
    return True, "outside the window: 1; not received: 0, dropped when " \
        "it came, the next taken"


def read_block(s, itt, cmdsn, lba, digest):
    """READ(10) of one 512-byte block: (status, data)."""
    cdb = bytes([0x28, 0, 0, 0, 0, lba, 0, 0, 1, 0]).ljust(16, b"\0")
    s.sendall(bhs(0x01, 0xc0, itt=itt, f20=512, f24=cmdsn, rest=cdb))
    back = b""
    while True:
        h = recv_exact(s, 48)
        dsl = int.from_bytes(h[5:8], "big")
        back += recv_exact(s, dsl + (-dsl % 4) + (4 if digest and dsl else 0))[:dsl]
        if h[0] != 0x25 or h[1] & 1:
            return h[3], back


def bad_data_out(s, cmdsn, pdus, what, digest=False):
    """WRITE(10) of len(@pdus) blocks at LBA 40, sent as unsolicited
    Data-Out PDUs of 512 bytes with the given (DataSN, bad digest) each:
    want (a Reject for each bad digest, then) a SCSI Response CHECK
    CONDITION 0B/47/05, the connection still serving, and LBA 40 as it
    was before (READ)."""
    dd = (lambda b: crc32c(b)) if digest else (lambda b: b"")
    # TEST UNIT READY takes the power-on unit attention; LBA 40 before
    s.sendall(bhs(0x01, 0x80, itt=2, f24=cmdsn, rest=bytes(16)))
    h = recv_exact(s, 48)
    dsl = int.from_bytes(h[5:8], "big")
    recv_exact(s, dsl + (-dsl % 4) + (4 if digest and dsl else 0))
    st0, before = read_block(s, 6, cmdsn + 1, 40, digest)
    cmdsn += 2
    n = len(pdus)
    cdb = bytes([0x2a, 0, 0, 0, 0, 40, 0, 0, n, 0]).ljust(16, b"\0")
    s.sendall(bhs(0x01, 0x20, itt=3, f20=512 * n, f24=cmdsn, rest=cdb))
    for i, (sn, bad) in enumerate(pdus):
        data = bytes([0x61 + i]) * 512
        s.sendall(bhs(0x05, 0x80 if i == n - 1 else 0, dsl=512, itt=3,
                      f20=0xffffffff, rest=struct.pack(">III", 0, sn, 512 * i)) +
                  data + (b"\0\0\0\0" if bad else dd(data)))
    rejects = 0
    while True:
        h = recv_exact(s, 48)
        dsl = int.from_bytes(h[5:8], "big")
        d = recv_exact(s, dsl + (-dsl % 4) + (4 if digest and dsl else 0))[:dsl]
        if h[0] != 0x3f:
            break
        rejects += h[2] == 0x02
    want_rejects = sum(1 for _, bad in pdus if bad)
    sense = (d[4] & 0x0f, d[14], d[15]) if h[0] == 0x21 and len(d) >= 16 else None
    ok = h[0] == 0x21 and h[3] == 0x02 and sense == (0x0b, 0x47, 0x05) and \
        rejects == want_rejects
    msg = "%s: %d data digest Rejects (want %d), opcode %02x status %02x sense %s" % (
        what, rejects, want_rejects, h[0], h[3], sense)
    # the connection goes on, and LBA 40 was not written
    st, back = read_block(s, 5, cmdsn + 1, 40, digest)
    same = st0 == 0 and len(before) == 512 and back == before
    ok = ok and st == 0 and same
    return ok, msg + "; then READ status %02x, LBA 40 %s" % (
        st, "as before" if same else "CHANGED")


def nop_out_answer(s, h, cmdsn):
    """Answer the target's NOP-In @h (11.18): immediate, ITT 0xffffffff,
    its TTT and LUN copied back."""
    s.sendall(bhs(0x40, 0x80, lun=struct.unpack(">Q", h[8:16])[0],
                  itt=0xffffffff, f20=struct.unpack(">I", h[20:24])[0],
                  f24=cmdsn))


def is_ping(h):
    """A NOP-In asking for an answer (11.19): F, ITT 0xffffffff, a TTT."""
    itt, ttt = struct.unpack(">II", h[16:24])
    return (h[0] == 0x20 and h[1] & 0x80 and itt == 0xffffffff and
            ttt != 0xffffffff and h[5:8] == b"\0\0\0")


def wait_async(s, cmdsn, timeout=30):
    """Idle until an Asynchronous Message comes, answering NOP-In pings
    on the way; the message's header and when it came."""
    s.settimeout(timeout)
    while True:
        h, _ = recv_pdu(s)
        if is_ping(h):
            nop_out_answer(s, h, cmdsn)
            continue
        return h, time.monotonic()


def check_async_logout(h):
    """An Asynchronous Message asking for a Logout (11.9.1): AsyncEvent 1,
    Parameter3 the seconds the initiator has, ITT 0xffffffff, the CmdSN
    window closed (MaxCmdSN = ExpCmdSN - 1)."""
    itt, = struct.unpack(">I", h[16:20])
    expcmdsn, maxcmdsn = struct.unpack(">II", h[28:36])
    p3, = struct.unpack(">H", h[42:44])
    ok = (h[0] == 0x32 and h[1] & 0x80 and itt == 0xffffffff and h[36] == 1
          and 1 <= p3 <= 2 and maxcmdsn == (expcmdsn - 1) & 0xffffffff)
    return ok, p3, "opcode %02x AsyncEvent %d Parameter3 %d ExpCmdSN %d MaxCmdSN %d" % (
        h[0], h[36], p3, expcmdsn, maxcmdsn)


def hold(s, cmdsn, statsn):
    """Stay logged in, idle (answering NOP-In pings), until the server
    stops: it asks for a Logout (Asynchronous Message, AsyncEvent 1) and,
    with none coming, closes the connection once Parameter3 seconds have
    gone, not before about half of them."""
    h, t = wait_async(s, cmdsn)
    ok, p3, msg = check_async_logout(h)
    gone = closed(s, timeout=p3 + 2)
    took = time.monotonic() - t
    ok = ok and gone and p3 / 8 <= took <= p3 + 1.5
    return ok, "%s; closed %s %.2f s after it" % (msg, gone, took)


def stop_logout(s, cmdsn):
    """At the stop: the Asynchronous Message asking for a Logout; a new
    command then gets Reject "waiting for logout" (0x0c); the Logout is
    answered and the connection closed at once."""
    h, _ = wait_async(s, cmdsn)
    ok1, _, msg = check_async_logout(h)
    s.sendall(bhs(0x41, 0x80, itt=0x66, f24=cmdsn, rest=bytes(16)))  # TUR, immediate
    h, _ = recv_pdu(s)
    ok2 = h[0] == 0x3f and h[2] == 0x0c
    s.sendall(bhs(0x46, 0x80, itt=0x77, f24=cmdsn))  # Logout, session, immediate
    h, _ = recv_pdu(s)
    t = time.monotonic()
    ok3 = h[0] == 0x26 and h[2] == 0 and struct.unpack(">I", h[16:20])[0] == 0x77
    gone = closed(s, timeout=2)
    took = time.monotonic() - t
    ok = ok1 and ok2 and ok3 and gone and took < 1
    return ok, "%s; TUR: Reject %s; Logout Response %02x/%d; closed %s %.2f s after" % (
        msg, "0x0c" if ok2 else "opcode %02x reason %02x" % (h[0], h[2]),
        h[0], h[2], gone, took)


def nopin(addr, target, what):
    """Keep-alive against a server started with --iscsi-nopin=1 (11.19).
    nopin_answer: a NOP-In ping comes after about a second of silence
    (F, ITT 0xffffffff, a TTT, no data, StatSN the next one without
    advancing it); answered, the connection stays past the response
    timeout and the next ping has another TTT; a ping of ours then gets
    the StatSN the target pings did not advance.  nopin_silent: answered
    with a wrong TTT only, the connection is closed about a second after
    the ping.  nopin_busy: a connection that keeps sending gets no ping;
    once it stops, one comes."""
    isid = bytes([0x80, 0, 0, 0, 0x0f, {"nopin_answer": 1, "nopin_silent": 2,
                                       "nopin_busy": 3}[what]])
    s, cmdsn, statsn = login(addr, target, isid=isid)
    s.settimeout(5)
    t0 = time.monotonic()
    if what == "nopin_busy":
        for i in range(7):
            s.sendall(bhs(0x40, 0x80, itt=100 + i, f20=0xffffffff, f24=cmdsn))
            h, _ = recv_pdu(s)
            if h[0] != 0x20 or struct.unpack(">I", h[16:20])[0] != 100 + i:
                return False, "busy: %s itt 0x%x instead of our ping's answer" % (
                    "a NOP-In ping" if is_ping(h) else "opcode %02x" % h[0],
                    struct.unpack(">I", h[16:20])[0])
            time.sleep(0.4)
        busy = time.monotonic() - t0
        t1 = time.monotonic()
        h, _ = recv_pdu(s)
        idle = time.monotonic() - t1
        ok = is_ping(h) and idle < 2
        return ok, "no ping in %.1f s of traffic; then %s after %.2f s idle" % (
            busy, "a ping" if is_ping(h) else "opcode %02x" % h[0], idle)
    h, _ = recv_pdu(s)
    t1 = time.monotonic() - t0
    ttt1, sn1 = struct.unpack(">I", h[20:24])[0], struct.unpack(">I", h[24:28])[0]
    ok = is_ping(h) and 0.8 <= t1 <= 2.5 and sn1 == (statsn + 1) & 0xffffffff
    first = "ping after %.2f s: opcode %02x flags %02x ITT 0x%x TTT 0x%x StatSN %d (want %d)" % (
        t1, h[0], h[1], struct.unpack(">I", h[16:20])[0], ttt1, sn1, statsn + 1)
    if what == "nopin_silent":
        # an answer with another TTT does not count
        s.sendall(bhs(0x40, 0x80, itt=0xffffffff, f20=ttt1 ^ 0x5a5a, f24=cmdsn))
        t2 = time.monotonic()
        gone = closed(s, timeout=5)
        took = time.monotonic() - t2
        ok = ok and gone and 0.7 <= took <= 1.8
        return ok, "%s; unanswered (a wrong TTT): closed %s %.2f s later" % (first, gone, took)
    nop_out_answer(s, h, cmdsn)
    h2, _ = recv_pdu(s)
    t2 = time.monotonic() - t0
    ttt2, sn2 = struct.unpack(">I", h2[20:24])[0], struct.unpack(">I", h2[24:28])[0]
    ok = ok and is_ping(h2) and ttt2 != ttt1 and sn2 == sn1 and t2 - t1 >= 0.8
    nop_out_answer(s, h2, cmdsn)
    time.sleep(0.5)
    s.sendall(bhs(0x40, 0x80, itt=9, f20=0xffffffff, f24=cmdsn))
    h3, _ = recv_pdu(s)
    sn3 = struct.unpack(">I", h3[24:28])[0]
    ok = (ok and h3[0] == 0x20 and struct.unpack(">I", h3[16:20])[0] == 9 and
          sn3 == sn1 and time.monotonic() - t0 > 2.5)
    return ok, "%s; answered: a second ping after %.2f s, TTT 0x%x StatSN %d; our ping answered with StatSN %d, alive %.1f s" % (
        first, t2, ttt2, sn2, sn3, time.monotonic() - t0)


def r2t_flow(addr, target):
    """Small bursts: a WRITE of 8 blocks with immediate data, then R2Ts
    of MaxBurstLength, two at a time, answered with Data-Out PDUs of 512
    bytes; a READ of them back in Data-In PDUs of 512 bytes, F at each
    burst's end, DataSN in order, the status in the last one."""
    s, cmdsn, _ = login(addr, target, ["MaxBurstLength=1024", "FirstBurstLength=512",
                                        "MaxOutstandingR2T=2",
                                        "MaxRecvDataSegmentLength=512"])
    # login() asked for ImmediateData=No and InitialR2T=No: no immediate
    # data, so the first 512 bytes are one unsolicited Data-Out
    # the nexus's first command gets the POWER ON unit attention
    s.sendall(bhs(0x01, 0x80, itt=39, f24=cmdsn, rest=bytes(16)))
    recv_pdu(s)
    cmdsn += 1
    data = bytes((i * 7 + 1) & 0xff for i in range(4096))
    cdb = bytes([0x2a, 0, 0, 0, 0, 16, 0, 0, 8, 0]).ljust(16, b"\0")  # LBA 16
    s.sendall(bhs(0x01, 0x20, itt=40, f20=4096, f24=cmdsn, rest=cdb))
    s.sendall(bhs(0x05, 0x80, dsl=512, itt=40, f20=0xffffffff,
                  rest=struct.pack(">III", 0, 0, 0)) + data[:512])
    solicited = []
    got = 512
    while True:
        h, _ = recv_pdu(s)
        if h[0] == 0x21:
            break
        if h[0] != 0x31:
            return False, "unexpected opcode %02x during the WRITE" % h[0]
        ttt, = struct.unpack(">I", h[20:24])
        r2tsn, off, ln = struct.unpack(">III", h[36:48])
        solicited.append((r2tsn, off, ln))
        for i, o in enumerate(range(off, off + ln, 512)):
            last = o + 512 >= off + ln
            s.sendall(bhs(0x05, 0x80 if last else 0, dsl=512, itt=40, f20=ttt,
                          rest=struct.pack(">III", 0, i, o)) + data[o:o + 512])
            got += 512
    want = [(0, 512, 1024), (1, 1536, 1024), (2, 2560, 1024), (3, 3584, 512)]
    if solicited != want or h[3] != 0 or got != 4096:
        return False, "R2Ts %s (want %s), status %02x" % (solicited, want, h[3])
    cdb = bytes([0x28, 0, 0, 0, 0, 16, 0, 0, 8, 0]).ljust(16, b"\0")
    s.sendall(bhs(0x01, 0xc0, itt=41, f20=4096, f24=cmdsn + 1, rest=cdb))
    back = b""
    pdus = []
    while True:
        h, d = recv_pdu(s)
        if h[0] != 0x25:
            return False, "opcode %02x instead of Data-In" % h[0]
        datasn, off = struct.unpack(">II", h[36:44])
        pdus.append((datasn, off, len(d), bool(h[1] & 0x80), bool(h[1] & 1)))
        back += d
        if h[1] & 1:
            break
    want = [(i, 512 * i, 512, i % 2 == 1, i == 7) for i in range(8)]
    ok = pdus == want and back == data and h[3] == 0
    return ok, "R2Ts %s; Data-In %s; data %s" % (solicited, "as expected" if pdus == want else pdus,
                                                  "equal" if back == data else "differs")


def scsi_status(s, itt):
    """The next PDU: a SCSI Response for @itt; its status and sense
    (key, ASC, ASCQ) or None."""
    h, d = recv_pdu(s)
    if h[0] != 0x21 or struct.unpack(">I", h[16:20])[0] != itt:
        raise RuntimeError("opcode %02x itt %d, want a SCSI Response for itt %d" %
                           (h[0], struct.unpack(">I", h[16:20])[0], itt))
    sense = None
    if len(d) >= 2 + 14:
        sn = d[2:]
        sense = (sn[2] & 0x0f, sn[12], sn[13])
    return h[3], sense


def tmf_other_nexus(addr, target, func, want_asc):
    """Two sessions (two I_T nexuses) on a unit whose reads take 1 s:
    A's CLEAR TASK SET (SAM-5 7.4; @func 4) or LOGICAL UNIT RESET (5)
    ends B's READ too.  TAS is 0 (the default): B gets no response for it
    (SAM-5 5.6), and a unit attention on its next command once it has
    ended, @want_asc: COMMANDS CLEARED BY ANOTHER INITIATOR (2F/00), or
    the reset's 29/03; A's function completes, and A gets no unit
    attention for CLEAR TASK SET, the reset's 29/03 for LOGICAL UNIT
    RESET (every I_T nexus gets it, the one that asked too)."""
    tur = bytes(16)
    sa, ca, _ = login(addr, target, isid=bytes([0x80, 0, 0, 0, 0, 0xa]))
    sb, cb, _ = login(addr, target, isid=bytes([0x80, 0, 0, 0, 0, 0xb]))
    for s, c in ((sa, ca), (sb, cb)):  # the POWER ON unit attention
        s.sendall(bhs(0x01, 0x80, itt=1, f24=c, rest=tur))
        st, sense = scsi_status(s, 1)
        if st != 2 or sense[0] != 6:
            return False, "first command: status %02x sense %s (want 29/00)" % (st, sense)
    ca += 1
    cb += 1
    read = bytes([0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0]).ljust(16, b"\0")
    sb.sendall(bhs(0x01, 0xc0, itt=50, f20=512, f24=cb, rest=read))
    cb += 1
    time.sleep(0.3)  # B's READ is in the core, its bio at the device
    t0 = time.monotonic()
    # Task Management Function Request, immediate
    sa.sendall(bhs(0x42, 0x80 | func, itt=60, f20=0xffffffff, f24=ca))
    h, _ = recv_pdu(sa)
    tmf_ok = h[0] == 0x22 and h[2] == 0 and struct.unpack(">I", h[16:20])[0] == 60
    took = time.monotonic() - t0
    time.sleep(1.5)  # the READ's bio has ended: aborted, no response
    sb.sendall(bhs(0x01, 0x80, itt=51, f24=cb, rest=tur))
    st_b, sense_b = scsi_status(sb, 51)  # not a response for itt 50
    sb.sendall(bhs(0x01, 0x80, itt=52, f24=cb + 1, rest=tur))
    st_b2, _ = scsi_status(sb, 52)
    sa.sendall(bhs(0x01, 0x80, itt=61, f24=ca, rest=tur))
    st_a, sense_a = scsi_status(sa, 61)
    ok_a = st_a == 0
    if func == 5:
        sa.sendall(bhs(0x01, 0x80, itt=62, f24=ca + 1, rest=tur))
        st_a2, _ = scsi_status(sa, 62)
        ok_a = st_a == 2 and sense_a == (6, 0x29, 0x03) and st_a2 == 0
    ok = (tmf_ok and st_b == 2 and sense_b == (6,) + want_asc and
          st_b2 == 0 and ok_a)
    got = "%X %02X/%02X" % sense_b if sense_b else "none"
    got_a = "%X %02X/%02X" % sense_a if sense_a else "none"
    return ok, ("TMF response %02x/%d (%.2f s); B: no answer to its READ, then "
                "status %02x sense %s (want 6 %02X/%02X), then %02x; A: %02x "
                "sense %s" %
                ((h[0], h[2], took, st_b, got) + want_asc + (st_b2, st_a, got_a)))


def main():
    addr, what, target = sys.argv[1], sys.argv[2], sys.argv[3]
    try:
        ok, msg = check(addr, what, target)
    except (OSError, EOFError, RuntimeError) as e:
        ok, msg = False, "%s: %s" % (type(e).__name__, e)
    print("%s: %s" % (what, msg))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
