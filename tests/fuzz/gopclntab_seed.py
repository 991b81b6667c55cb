#!/usr/bin/env python3
"""gopclntab_seed.py - a small seed for fuzz_gopclntab from a real Go 1.18+
binary: its .gopclntab re-laid with a few functions (main.*, goexit, mstart,
rt0_go and the first ones), each with its pcsp, pcfile and pcln tables, the
whole cutab and filetab, no pcdata or funcdata.
Usage: gopclntab_seed.py GO_BINARY OUT"""
import struct
import subprocess
import sys


def section(path, name):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "] " + name + " " in line:
            f = line.split("]")[1].split()
            off, size = int(f[3], 16), int(f[4], 16)
            with open(path, "rb") as fh:
                fh.seek(off)
                return fh.read(size)
    sys.exit("no %s in %s" % (name, path))


def varint(d, p):
    v = shift = 0
    while True:
        b = d[p]
        p += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, p


def table_len(d, start):
    """Bytes of the pc-value table at start, its terminating 0 included."""
    p, first = start, True
    while True:
        uv, q = varint(d, p)
        if uv == 0 and not first:
            return q - start
        _, p = varint(d, q)
        first = False


def main():
    d = section(sys.argv[1], ".gopclntab")
    magic, _, _, minlc, ptr, nfunc, nfiles, text, fname, cu, ftab, pctab, pcln = \
        struct.unpack_from("<IBBBBQQQQQQQQ", d, 0)
    assert magic in (0xfffffff0, 0xfffffff1) and ptr == 8
    fsize = 40 if magic == 0xfffffff0 else 44  # fixed _func, with funcID..nfuncdata
    funcs = []
    for i in range(nfunc):
        entry, off = struct.unpack_from("<II", d, pcln + 8 * i)
        rec = pcln + off
        name_off = struct.unpack_from("<i", d, rec + 4)[0]
        name = d[fname + name_off:d.index(b"\0", fname + name_off)]
        funcs.append((entry, rec, name))
    end = struct.unpack_from("<I", d, pcln + 8 * nfunc)[0]
    want = {b"runtime.goexit", b"runtime.mstart", b"runtime.rt0_go"}
    pick = [i for i, f in enumerate(funcs) if i < 8 or f[2] in want or f[2].startswith(b"main.")]
    names, pcs, recs = bytearray(), bytearray(b"\0"), []
    for i in pick:
        entry, rec, name = funcs[i]
        r = bytearray(d[rec:rec + fsize])
        struct.pack_into("<i", r, 4, len(names))
        names += name + b"\0"
        for k in (4, 5, 6):  # pcsp, pcfile, pcln
            off = struct.unpack_from("<I", r, 4 + 4 * k)[0]
            if off:
                n = table_len(d, pctab + off)
                struct.pack_into("<I", r, 4 + 4 * k, len(pcs))
                pcs += d[pctab + off:pctab + off + n]
        struct.pack_into("<I", r, 28, 0)  # npcdata
        r[fsize - 1] = 0  # nfuncdata
        recs.append((entry, r))
    cutab, filetab = d[cu:ftab], d[ftab:pctab]
    hdr = 72
    o_names = hdr
    o_cu = o_names + len(names)
    o_file = o_cu + len(cutab)
    o_pc = o_file + len(filetab)
    o_tab = o_pc + len(pcs)
    tab = bytearray()
    body = bytearray()
    base = 8 * (len(recs) + 1)
    for entry, r in recs:
        tab += struct.pack("<II", entry, base + len(body))
        body += r
    last = pick[-1]
    tab += struct.pack("<II", funcs[last + 1][0] if last + 1 < nfunc else end, 0)
    out = struct.pack("<IBBBBQQQQQQQQ", magic, 0, 0, minlc, ptr, len(recs), nfiles, text,
                      o_names, o_cu, o_file, o_pc, o_tab)
    out += names + cutab + filetab + pcs + tab + body
    with open(sys.argv[2], "wb") as fh:
        fh.write(out)


main()
