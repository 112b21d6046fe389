"""unique_to_global.py OBJECT: rebinds the object's STB_GNU_UNIQUE symbols as
STB_GLOBAL, in place.

gcc gives static locals of inline functions and static data members of
templates the GNU-unique binding (one instance per process, even across
shared libraries). objcopy's --keep-global-symbol localizes GLOBAL and WEAK
symbols only, so a unique one would stay global in libshardplan.a and clash
with the same inline function in the program linking it ("multiple
definition of `counter()::c'"). Rebound as GLOBAL first, objcopy localizes it
like the rest: the engine keeps its own instance, as in libshardplan.so, whose
version script makes them local too.

Both bindings are non-local, so the symbol table's locals-first order (and
its sh_info) stays valid. ELF64 little-endian objects only (the x86-64 and
arm64 builds); anything else is refused.
"""

import struct
import sys

STB_GLOBAL = 1
STB_GNU_UNIQUE = 10
SHT_SYMTAB = 2


def main(path):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            sys.exit(f"{path}: not a little-endian ELF64 object")
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        changed = 0
        for i in range(shnum):
            base = shoff + i * shentsize
            (sh_type,) = struct.unpack_from("<I", data, base + 4)
            if sh_type != SHT_SYMTAB:
                continue
            offset, size = struct.unpack_from("<QQ", data, base + 0x18)
            (entsize,) = struct.unpack_from("<Q", data, base + 0x38)
            for sym in range(offset, offset + size, entsize):
                info = data[sym + 4]
                if info >> 4 == STB_GNU_UNIQUE:
                    data[sym + 4] = (STB_GLOBAL << 4) | (info & 0xF)
                    changed += 1
        f.seek(0)
        f.write(data)
    print(f"{path}: {changed} GNU-unique symbols rebound as global")


if __name__ == "__main__":
    main(sys.argv[1])
