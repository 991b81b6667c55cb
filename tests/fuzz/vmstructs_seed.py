#!/usr/bin/env python3
"""vmstructs_seed.py - a seed for fuzz_vmstructs (and the replay tests of
tests/unit/test_vmstructs.c) from a running HotSpot JVM: its four VMStructs
tables (gHotSpotVMStructs, gHotSpotVMTypes, gHotSpotVMIntConstants,
gHotSpotVMLongConstants) read from /proc/PID/mem (root), re-laid in the
compact image user/collect/runtimes/java/vmstructs.h describes: the 24
symbols' values first (the tables' addresses, the entry layouts'
values), then each table's entries with their string
pointers pointing into the image, then the strings. Image addresses start
at 0x10000000 (MEM of the fuzz target and the tests).
Usage: vmstructs_seed.py PID OUT [TYPE...]  (TYPEs: keep only the entries
of those types, and every constant, for a small seed)"""
import struct
import subprocess
import sys

MEM = 0x10000000
# the order of enum st_vm_sym (vmstructs.h)
SYMS = ["gHotSpotVMStructs", "gHotSpotVMTypes", "gHotSpotVMIntConstants",
        "gHotSpotVMLongConstants",
        "gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
        "gHotSpotVMStructEntryTypeStringOffset", "gHotSpotVMStructEntryIsStaticOffset",
        "gHotSpotVMStructEntryOffsetOffset", "gHotSpotVMStructEntryAddressOffset",
        "gHotSpotVMStructEntryArrayStride",
        "gHotSpotVMTypeEntryTypeNameOffset", "gHotSpotVMTypeEntrySuperclassNameOffset",
        "gHotSpotVMTypeEntryIsOopTypeOffset", "gHotSpotVMTypeEntryIsIntegerTypeOffset",
        "gHotSpotVMTypeEntryIsUnsignedOffset", "gHotSpotVMTypeEntrySizeOffset",
        "gHotSpotVMTypeEntryArrayStride",
        "gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset",
        "gHotSpotVMIntConstantEntryArrayStride",
        "gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
        "gHotSpotVMLongConstantEntryArrayStride"]


def libjvm(pid):
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6 and f[5].endswith("/libjvm.so") and f[2] == "00000000":
            return int(f[0].split("-")[0], 16), f[5]
    sys.exit("no libjvm.so in process %d" % pid)


def main():
    pid, out, keep = int(sys.argv[1]), sys.argv[2], set(sys.argv[3:])
    base, path = libjvm(pid)
    nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                        text=True).stdout
    addr = {}
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 3:
            addr[f[2].split("@")[0]] = int(f[0], 16) + base
    mem = open("/proc/%d/mem" % pid, "rb")

    def rd(a, n):
        mem.seek(a)
        return mem.read(n)

    def u64(a):
        return struct.unpack("<Q", rd(a, 8))[0]

    def cstr(a):
        s = b""
        while b"\0" not in s:
            s += rd(a + len(s), 64)
        return s[:s.index(b"\0")]

    v = {s: u64(addr[s]) for s in SYMS}
    # (entries' bytes, the offsets of their name pointers) per table
    tables = []
    specs = [("gHotSpotVMStructs", "gHotSpotVMStructEntry", ["TypeName", "FieldName", "TypeString"]),
             ("gHotSpotVMTypes", "gHotSpotVMTypeEntry", ["TypeName", "SuperclassName"]),
             ("gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntry", ["Name"]),
             ("gHotSpotVMLongConstants", "gHotSpotVMLongConstantEntry", ["Name"])]
    for table, pre, names in specs:
        stride = v[pre + "ArrayStride"]
        offs = [v[pre + n + "Offset"] for n in names]
        at, rows = v[table], []
        while True:
            e = bytearray(rd(at, stride))
            ptrs = [struct.unpack_from("<Q", e, o)[0] for o in offs]
            if ptrs[0] == 0:
                rows.append((e, [None] * len(offs)))
                break
            strs = [cstr(p) if p else None for p in ptrs]
            if not keep or "Constant" in pre or strs[0].decode() in keep:
                rows.append((e, strs))
            at += stride
        tables.append((table, stride, offs, rows))
    img = bytearray(8 * len(SYMS))
    for i, s in enumerate(SYMS):
        struct.pack_into("<Q", img, 8 * i, v[s])
    strings = bytearray()
    interned = {}
    where = {}
    # entries first, strings after them
    at = len(img)
    for table, stride, offs, rows in tables:
        where[table] = at
        at += stride * len(rows)
    str_base = at
    for table, stride, offs, rows in tables:
        struct.pack_into("<Q", img, 8 * SYMS.index(table), MEM + where[table])
        for e, strs in rows:
            for o, s in zip(offs, strs):
                p = 0
                if s is not None:
                    if s not in interned:
                        interned[s] = MEM + str_base + len(strings)
                        strings += s + b"\0"
                    p = interned[s]
                struct.pack_into("<Q", e, o, p)
            img += e
    img += strings
    open(out, "wb").write(img)
    print("%s: %d bytes, %s" % (out, len(img), ", ".join(
        "%s %d" % (t, len(r) - 1) for t, _, _, r in tables)))


if __name__ == "__main__":
    main()
