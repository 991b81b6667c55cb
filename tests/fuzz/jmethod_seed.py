#!/usr/bin/env python3
"""jmethod_seed.py - seeds for fuzz_jmethod (replayed by
tests/unit/test_javawalk.c): synthetic JVM memory laid out as
tests/fuzz/jmethod_fake.h says, a Method of class com/example/Deep named
main, signature ([Ljava/lang/String;)V, source Deep.java, 320 bytes of
bytecodes and a line table (bci 0: line 17, bci 4: 18, bci 300: 25; a
long pair, a short one, a long one with a two-byte UNSIGNED5 number), in
JDK 17's layout and encoding (X = 0) and Temurin 25's (X = 1).
Usage: jmethod_seed.py OUTDIR"""
import os
import struct
import sys

MEM = 0x10000000
L = {17: dict(code_size=32, name=34, sig=36, cm_size=48, flags_fmt="<H"),
     25: dict(code_size=34, name=36, sig=38, cm_size=56, flags_fmt="<I")}
LINES = [(0, 17), (4, 18), (300, 25)]
CODE_SIZE = 320


def unsigned5(v, x):
    lo = 192 - x
    out = []
    for i in range(5):
        if v < lo or i == 4:
            out.append(v + x)
            break
        v -= lo
        out.append(x + lo + v % 64)
        v >>= 6
    return bytes(out)


def signed5(v, x):
    return unsigned5(((v << 1) ^ (v >> 31)) & 0xffffffff, x)


def line_table(x):
    out, b, ln = bytearray(), 0, 0
    for bci, line in LINES:
        db, dl = bci - b, line - ln
        b, ln = bci, line
        if 0 <= db < 32 and 0 <= dl < 8 and ((db << 3) | dl) != 0xff:
            out.append((db << 3) | dl)
        else:
            out += b"\xff" + signed5(db, x) + signed5(dl, x)
    return bytes(out + b"\0")


def image(jdk, bci):
    lay, x = L[jdk], 1 if jdk >= 20 else 0
    m = bytearray(0x1000)

    def put(at, data):
        m[at:at + len(data)] = data

    m[0] = 1 if jdk == 25 else 0
    put(2, struct.pack("<H", bci))
    cm, cp, k, syms = 0x100, 0x600, 0x800, 0x900
    put(8 + 8, struct.pack("<Q", MEM + cm))         # Method::_constMethod
    put(cm + 8, struct.pack("<Q", MEM + cp))        # _constants
    put(cm + 28, struct.pack(lay["flags_fmt"], 1))  # has a line number table
    put(cm + lay["code_size"], struct.pack("<H", CODE_SIZE))
    put(cm + lay["name"], struct.pack("<H", 1))
    put(cm + lay["sig"], struct.pack("<H", 2))
    put(cm + lay["cm_size"] + CODE_SIZE, line_table(x))
    put(cp + 24, struct.pack("<Q", MEM + k))        # _pool_holder
    put(cp + 60, struct.pack("<i", 8))              # _length
    put(cp + 54, struct.pack("<H", 3))              # _source_file_name_index
    at = syms
    for i, text in [(1, b"main"), (2, b"([Ljava/lang/String;)V"), (3, b"Deep.java"),
                    (0, b"com/example/Deep")]:
        put(at + 4, struct.pack("<H", len(text)))
        put(at + 6, text)
        if i:
            # entry 3 with the low tag bit some JDKs set
            put(cp + 72 + 8 * i, struct.pack("<Q", MEM + at + (1 if i == 3 else 0)))
        else:
            put(k + 24, struct.pack("<Q", MEM + at))
        at += 8 + len(text) + (-(8 + len(text)) % 8)
    return bytes(m)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for jdk in (17, 25):
        for bci in (0, 3, 4, 299, 300):
            open(os.path.join(out, "jdk%d_bci%d" % (jdk, bci)), "wb").write(image(jdk, bci))


if __name__ == "__main__":
    main()
