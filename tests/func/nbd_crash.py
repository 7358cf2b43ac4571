#!/usr/bin/env python3
# A writer for the crash test (test_nbd_crash.sh): it writes numbered 4 KiB
# blocks over NBD, some with FUA, a flush every 16 writes, and logs every
# write it sends and every write the server acknowledges, until the server
# dies under it; then the verifier reads the file the server served and
# checks that every acknowledged write is there.
#
#   nbd_crash.py write ADDRESS LOG [BLOCKS]   ADDRESS: unix:PATH or HOST:PORT
#   nbd_crash.py verify FILE LOG [BLOCKS]
#
# Writes go one at a time (one in flight), to block (i * 7919) % BLOCKS, so
# blocks are overwritten.  For each block the file must hold the last
# acknowledged write to it, or the one write that was in flight when the
# server died (it may or may not have landed).  Exit 0 when every
# acknowledged write is there, 1 otherwise; the writer exits 0 when the
# server went away after at least one acknowledged write.
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nbd_raw import CMD_FLUSH, CMD_WRITE, FLAG_FUA, Conn  # noqa: E402

BS = 4096


def block(i, blocks):
    return (i * 7919) % blocks


def payload(i, off):
    head = struct.pack(">QQ", i, off)
    return (head * (BS // len(head)))[:BS]


def write(addr, log, blocks):
    c = Conn(addr)
    c.start()
    c.go()
    acked = 0
    with open(log, "w") as f:
        i = 0
        try:
            while True:
                off = block(i, blocks) * BS
                flags = FLAG_FUA if i % 3 == 0 else 0
                f.write("sent %d %d\n" % (i, off))
                f.flush()
                e, _ = c.cmd(CMD_WRITE, off, BS, flags, payload(i, off))
                if e:
                    f.write("error %d %d\n" % (i, e))
                    break
                f.write("acked %d %d\n" % (i, off))
                acked += 1
                if i % 16 == 15:
                    e, _ = c.cmd(CMD_FLUSH)
                    if e:
                        break
                i += 1
        except (OSError, EOFError, Exception) as ex:  # the server died
            f.write("gone %s\n" % type(ex).__name__)
    print("%d writes acknowledged" % acked)
    return 0 if acked else 1


def verify(path, log, blocks):
    last_acked = {}
    in_flight = None
    for line in open(log):
        w = line.split()
        if w[0] == "sent":
            in_flight = (int(w[1]), int(w[2]))
        elif w[0] == "acked":
            last_acked[int(w[2])] = int(w[1])
            in_flight = None
    bad = 0
    with open(path, "rb") as f:
        for off, i in sorted(last_acked.items()):
            f.seek(off)
            got = f.read(BS)
            ok = [payload(i, off)]
            if in_flight and in_flight[1] == off:
                ok.append(payload(in_flight[0], off))
            if got not in ok:
                have = struct.unpack(">QQ", got[:16]) if len(got) >= 16 else got
                print("block at %d: acknowledged write %d lost (file has %s)"
                      % (off, i, have), file=sys.stderr)
                bad += 1
    print("%d blocks checked, %d lost" % (len(last_acked), bad))
    return 1 if bad or not last_acked else 0


def main():
    mode, target, log = sys.argv[1:4]
    blocks = int(sys.argv[4]) if len(sys.argv) > 4 else 2048
    if mode == "write":
        return write(target, log, blocks)
    return verify(target, log, blocks)


if __name__ == "__main__":
    sys.exit(main())
