# fio's latency log with log_offset=1 (time, value, ddir, bs, offset, ...),
# in submission order (iodepth=1, one thread): every write at its zone's
# write pointer (a full zone's start counts a reset), every read within
# written data, at most maxopen zones partly written at any time.
# -v zs=ZONESIZE -v cap=CAPACITY -v maxopen=N (0: no limit)
BEGIN { FS = ", *"; bad = 0; resets = 0; open = 0; maxseen = 0; w = 0; r = 0 }
{
	ddir = $3; len = $4; off = $5; z = int(off / zs); start = z * zs
	if (!(z in wp)) wp[z] = start
	if (ddir == 1) {
		w++
		if (off != wp[z]) {
			if (off == start && wp[z] > start) {
				resets++
				if (wp[z] < start + cap) open--
				wp[z] = start
			} else {
				bad++
				if (bad <= 3) printf "write %d at %d: zone %d write pointer %d\n", NR, off, z, wp[z] > "/dev/stderr"
			}
		}
		was_open = wp[z] > start && wp[z] < start + cap
		wp[z] = off + len
		if (wp[z] > start + cap) { bad++; print "write past capacity at " off > "/dev/stderr" }
		now_open = wp[z] > start && wp[z] < start + cap
		open += now_open - was_open
		if (open > maxseen) maxseen = open
	} else if (ddir == 0) {
		r++
		if (off < start || off + len > wp[z]) {
			bad++
			if (bad <= 3) printf "read %d at %d+%d: zone %d written to %d\n", NR, off, len, z, wp[z] > "/dev/stderr"
		}
	}
}
END { printf "%d %d %d %d %d\n", w, r, bad, resets, maxseen }
