"""A UF2 writer after Microsoft's specification (github.com/microsoft/uf2,
README "File format"), written independently of host/build/uf2_file.py, so
the tests of the reader read bytes it did not make itself.

Each 512-byte block: eight little-endian 32-bit words (magicStart0
0x0A324655, magicStart1 0x9E5D5157, flags, targetAddr, payloadSize,
blockNo, numBlocks, fileSize-or-familyID), 476 bytes of data (the payload
first, zero-padded), then magicEnd 0x0AB16F30. This is what MicroPython's
rp2 build (picotool / elf2uf2) writes for the RP2040: 256-byte payloads at
consecutive flash addresses from 0x10000000, flag 0x2000 (familyID present),
family 0xE48BFF56.
"""

import struct

START0, START1, END = 0x0A324655, 0x9E5D5157, 0x0AB16F30
FAMILY_ID_PRESENT = 0x2000
RP2040 = 0xE48BFF56


def blocks(image, base=0x10000000, family=RP2040, payload=256, flags=FAMILY_ID_PRESENT):
    """The UF2 blocks (a list of 512-byte bytes) for `image` written from `base`."""
    chunks = [image[i:i + payload] for i in range(0, len(image), payload)] or [b""]
    out = []
    for no, chunk in enumerate(chunks):
        head = struct.pack("<8I", START0, START1, flags, base + no * payload, payload, no, len(chunks), family)
        data = chunk.ljust(payload, b"\x00").ljust(476, b"\x00")
        out.append(head + data + struct.pack("<I", END))
    return out


def uf2(image, **kw):
    """A whole UF2 file for `image` (bytes)."""
    return b"".join(blocks(image, **kw))


def firmware_like(size=5000, seed=1):
    """A deterministic image standing for a firmware binary (its bytes do not
    matter to the boot ROM's checks; its length does: not a page multiple)."""
    out = bytearray()
    x = seed
    while len(out) < size:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out += x.to_bytes(4, "little")
    return bytes(out[:size])
