#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mkseeds.py - write the generated seeds of tests/fuzz/corpus/.

    tests/fuzz/mkseeds.py USBRIG_GADGET [CORPUS_DIR]

Run from the repository root after `make`; it rewrites the seeds it owns
(names starting with "gen-") and copies the repository's own inputs (the
example gadgets, the scenarios, the import test data) under names that say
where they came from.  The layouts of the binary inputs are those of the
targets' header comments (tests/fuzz/fuzz_*.c).  USBRIG_GADGET is used for
`--dump`: the descriptors of each example become the sysfs, pcap and
usbmon seeds.
"""
import glob
import os
import shutil
import struct
import subprocess
import sys

# the Makefile's FUZZ_GADGETS, in order: busid 1-(index + 1)
GADGETS = ["zero", "vendor-bulk", "faults", "acm", "ftdi", "pl2303",
           "hid-keyboard-fn", "mass-storage", "alt-settings", "composite-iad",
           "superspeed", "lowspeed-interrupt", "hid-keyboard", "hid-mouse",
           "malformed-total", "everything", "cp210x", "ch341", "mct_u232",
           "cdc-ecm", "cdc-ncm", "ax88179", "usbtmc", "uvc-bulk", "uvc-iso",
           "printer", "uac1", "uac2", "uac2-implicit", "hid-reports"]


def gadget_path(name):
    if name in ("everything", "hid-reports"):
        return "tests/fuzz/%s.gadget" % name
    return "gadgets/examples/%s.gadget" % name


def dump(gadget_bin, name):
    """(descriptors by label, [(bConfigurationValue, endpoints, alts)])

    endpoints: (address, type, wMaxPacketSize, (interface, alt)) of each
    configuration as --dump lists them; alts: (interface, alt) pairs."""
    out = subprocess.run([gadget_bin, "--dump", gadget_path(name)],
                         check=True, capture_output=True, text=True).stdout
    desc, cfgs, cur = {}, [], None
    for line in out.splitlines():
        if line.startswith("# config "):
            w = line.split()
            cur = (int(w[w.index("bConfigurationValue") + 1]), [], [])
            cfgs.append(cur)
        elif line.startswith("# ") and not line.startswith("#   "):
            cur = None
        if cur and line.startswith("#   interface "):
            w = line.split()
            cur[2].append((int(w[2]), int(w[4].rstrip(":"))))
        if cur and line.startswith("#   endpoint "):
            w = line.split()
            mps = int(w[w.index("wMaxPacketSize") + 1])
            cur[1].append((int(w[2], 16), w[4].rstrip(":"), mps,
                           cur[2][-1]))
        if not line.startswith("#") and ":" in line:
            label, hexes = line.split(":", 1)
            desc[label.strip()] = bytes.fromhex(hexes)
    return desc, cfgs


# ---- USB/IP PDUs (docs/usbip-protocol.md) ----
def op(code, version=0x0111):
    return struct.pack(">HHI", version, code, 0)


def op_import(busid, version=0x0111):
    return op(0x8003, version) + busid.encode().ljust(32, b"\0")


def setup(rt, req, val, idx, wlen):
    return struct.pack("<BBHHH", rt, req, val, idx, wlen)


def submit(seq, devid, din, ep, length, data=b"", stp=b"\0" * 8, iso=None,
           flags=0):
    np = len(iso) if iso else 0
    h = struct.pack(">IIIII", 1, seq, devid, din, ep)
    h += struct.pack(">IiiiI", flags, length, 0, np, 0) + stp
    out = b"" if din else data
    for off, ln in iso or []:
        out += struct.pack(">IIIi", off, ln, 0, 0)
    return h + out


def unlink(seq, devid, victim):
    return struct.pack(">IIIIII", 2, seq, devid, 0, 0, victim) + b"\0" * 24


class Conn:
    """builds one URB-phase stream with increasing seqnums"""

    def __init__(self, devid):
        self.devid, self.seq, self.out = devid, 0, b""

    def ctrl(self, rt, req, val, idx, wlen, data=b""):
        self.seq += 1
        din = 1 if rt & 0x80 else 0
        self.out += submit(self.seq, self.devid, din, 0, wlen,
                           data.ljust(wlen, b"\0") if not din else b"",
                           setup(rt, req, val, idx, wlen))
        return self.seq

    def ep(self, addr, length, data=b"", iso=None):
        self.seq += 1
        din = 1 if addr & 0x80 else 0
        self.out += submit(self.seq, self.devid, din, addr & 15, length,
                           data.ljust(length, b"\0")[:length], iso=iso)
        return self.seq

    def unlink(self, victim):
        self.seq += 1
        self.out += unlink(self.seq, self.devid, victim)


def rec(conn, data, ctl=0):
    """fuzz_pdu records: ctl, u16 length, bytes (split at 65535)"""
    out = b""
    while True:
        chunk, data = data[:65535], data[65535:]
        out += struct.pack("<BH", ctl | conn, len(chunk)) + chunk
        ctl &= ~4
        if not data:
            return out


def enum_requests(c):
    c.ctrl(0x80, 6, 0x0100, 0, 18)
    c.ctrl(0x80, 6, 0x0200, 0, 9)
    c.ctrl(0x80, 6, 0x0200, 0, 255)
    for i in range(4):
        c.ctrl(0x80, 6, 0x0300 | i, 0x0409 if i else 0, 255)
    c.ctrl(0x80, 6, 0x0600, 0, 10)
    c.ctrl(0x80, 6, 0x0700, 0, 255)
    c.ctrl(0x80, 6, 0x0f00, 0, 5)


def config_requests(c, value, alts):
    c.ctrl(0x00, 9, value, 0, 0)
    c.ctrl(0x80, 8, 0, 0, 1)
    c.ctrl(0x80, 0, 0, 0, 2)
    c.ctrl(0x81, 0, 0, 0, 2)
    for intf, alt in alts:
        if alt:
            c.ctrl(0x01, 11, alt, intf, 0)
            c.ctrl(0x81, 10, 0, intf, 1)


CLASS_REQS = {
    "acm": [(0x21, 0x20, 0, 0, 7, bytes([0x80, 0x25, 0, 0, 0, 0, 8])),
            (0xa1, 0x21, 0, 0, 7, b""), (0x21, 0x22, 3, 0, 0, b"")],
    "ftdi": [(0x40, 0, 0, 0, 0, b""), (0x40, 3, 0x4138, 0, 0, b""),
             (0x40, 1, 0x0303, 0, 0, b""), (0xc0, 5, 0, 0, 2, b""),
             (0xc0, 0x90, 0, 0, 2, b"")],
    "pl2303": [(0xc0, 1, 0x8484, 0, 1, b""), (0x40, 1, 0x0404, 0, 0, b""),
               (0x21, 0x20, 0, 0, 7, bytes([0x80, 0x25, 0, 0, 0, 0, 8])),
               (0xa1, 0x21, 0, 0, 7, b"")],
    "hid-keyboard-fn": [(0x81, 6, 0x2200, 0, 64, b""),
                        (0x21, 0x0a, 0, 0, 0, b""),
                        (0xa1, 0x01, 0x0100, 0, 8, b""),
                        (0x21, 0x09, 0x0200, 0, 1, b"\x01")],
    "mass-storage": [(0xa1, 0xfe, 0, 0, 1, b""), (0x21, 0xff, 0, 0, 0, b"")],
    "vendor-bulk": [(0xc0, 1, 0, 0, 64, b""), (0x40, 2, 0, 0, 4, b"abcd"),
                    (0xc0, 0x33, 1, 2, 16, b"")],
    "faults": [(0xc0, 0x10, 0, 0, 8, b"")] * 3,
    # the node id, RX_CTL start + broadcast, medium mode receive enable,
    # as ax88179_178a's bind and reset write them
    "ax88179": [(0x40, 1, 0x10, 6, 6, bytes.fromhex("020000007901")),
                (0x40, 1, 0x0b, 2, 2, bytes([0x88, 0x00])),
                (0x40, 1, 0x22, 2, 2, bytes([0x00, 0x01])),
                (0xc0, 1, 0x22, 2, 2, b"")],
    # NCM: GET_NTB_PARAMETERS, SET_NTB_INPUT_SIZE; ECM: packet filter
    "cdc-ncm": [(0xa1, 0x80, 0, 0, 28, b""),
                (0x21, 0x86, 0, 0, 4, struct.pack("<I", 16384))],
    "cdc-ecm": [(0x21, 0x43, 0x0e, 0, 0, b"")],
    # GET_CAPABILITIES, INITIATE_CLEAR, CHECK_CLEAR_STATUS, INDICATOR_PULSE
    "usbtmc": [(0xa1, 7, 0, 0, 0x18, b""), (0xa1, 5, 0, 0, 1, b""),
               (0xa1, 6, 0, 0, 2, b""), (0xa1, 64, 0, 0, 1, b"")],
    # GET_DEVICE_ID as usblp asks it (interface 0 in wIndex's high byte,
    # alternate setting 0 in the low one), GET_PORT_STATUS, SOFT_RESET
    # as the class says it (interface) and as Linux sends it (other)
    "printer": [(0xa1, 0, 0, 0, 1023, b""), (0xa1, 1, 0, 0, 1, b""),
                (0x21, 2, 0, 0, 0, b""), (0x23, 2, 0, 0, 0, b"")],
    # SET_CUR and GET_CUR of the sampling rate on the OUT endpoint
    "uac1": [(0x22, 0x01, 0x0100, 0x01, 3, bytes([0x80, 0xbb, 0])),
             (0xa2, 0x81, 0x0100, 0x01, 3, b"")],
    # the clock source's CUR, RANGE (2 bytes, then whole), validity, and
    # setting the rate (SET CUR)
    "uac2": [(0xa1, 1, 0x0100, 0x0100, 4, b""),
             (0xa1, 2, 0x0100, 0x0100, 2, b""),
             (0xa1, 2, 0x0100, 0x0100, 14, b""),
             (0xa1, 1, 0x0200, 0x0100, 1, b""),
             (0x21, 1, 0x0100, 0x0100, 4, bytes([0x80, 0xbb, 0, 0]))],
    "everything": [(0xc0, 1, 0, 0, 8, b""), (0xc0, 2, 0, 0, 2, b""),
                   (0xc0, 2, 0, 0, 2, b""), (0xc0, 2, 0, 0, 2, b""),
                   (0xc0, 3, 0x1234, 0, 4, b""), (0x40, 4, 0, 0, 2, b"ab"),
                   (0x40, 4, 0, 0, 0, b""), (0x40, 4, 0, 0, 0, b""),
                   (0x41, 9, 0, 1, 0, b""), (0x80, 6, 0x0309, 0, 255, b""),
                   (0x80, 6, 0x0309, 0, 255, b""), (0x21, 5, 7, 0, 3, b"xyz"),
                   (0x00, 9, 7, 0, 0, b""), (0x00, 9, 1, 0, 0, b""),
                   (0x01, 11, 2, 1, 0, b""), (0x80, 0, 0, 0, 2, b""),
                   (0x00, 3, 1, 0, 0, b""), (0x00, 1, 1, 0, 0, b"")],
}
CLASS_REQS["uac2-implicit"] = CLASS_REQS["uac2"]


def cbw(tag, xfer, din, cdb):
    return struct.pack("<IIIBBB", 0x43425355, tag, xfer,
                       0x80 if din else 0, 0, len(cdb)) + cdb.ljust(16, b"\0")


MSC_CMDS = [  # (CDB, data length, IN?)
    (bytes([0x12, 0, 0, 0, 36, 0]), 36, True),            # INQUIRY
    (bytes([0x00] * 6), 0, False),                          # TEST UNIT READY
    (bytes([0x25] + [0] * 9), 8, True),                     # READ CAPACITY
    (bytes([0x1a, 0, 0x3f, 0, 24, 0]), 24, True),         # MODE SENSE(6)
    (bytes([0x2a, 0, 0, 0, 0, 1, 0, 0, 1, 0]), 512, False),  # WRITE(10)
    (bytes([0x28, 0, 0, 0, 0, 1, 0, 0, 1, 0]), 512, True),   # READ(10)
    (bytes([0x03, 0, 0, 0, 18, 0]), 18, True),            # REQUEST SENSE
    (bytes([0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0]), 16, True),  # REPORT LUNS
    (bytes([0x28, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 1, 0]), 512, True),
]


def msc_traffic(c):
    for tag, (cdb, n, din) in enumerate(MSC_CMDS, 1):
        c.ep(0x02, 31, cbw(tag, n, din, cdb))
        if n:
            c.ep(0x81 if din else 0x02, n, bytes(range(256)) * 2)
        c.ep(0x81, 13)


def tmc_msg(msgid, tag, size, attr, data=b""):
    """a USBTMC bulk message: the 12-byte header, data, alignment"""
    m = struct.pack("<BBBBIB3x", msgid, tag, ~tag & 0xff, 0, size, attr)
    m += data
    return m + bytes(-len(m) % 4)


def tmc_traffic(c):
    """*IDN? and a query of the gadget's `respond`, each asked for on
    bulk IN, then a header with a wrong bTagInverse (bulk OUT halts) and
    the clearing"""
    for tag, cmd in ((1, b"*IDN?\n"), (3, b"MEAS:VOLT?\n")):
        c.ep(0x01, 0, b"")
        m = tmc_msg(1, tag, len(cmd), 1, cmd)
        c.ep(0x01, len(m), m)
        m = tmc_msg(2, tag + 1, 64, 0)
        c.ep(0x01, len(m), m)
        c.ep(0x82, 512)
    bad = bytearray(tmc_msg(1, 5, 4, 1, b"abcd"))
    bad[2] = 0
    c.ep(0x01, len(bad), bytes(bad))
    c.ctrl(0x02, 1, 0, 0x01, 0, b"")


# ---- frames for the network functions (fuzz_net, and fuzz_pdu's ether
# and ax88179 gadgets): the host 02:00:00:00:77:01 / 192.168.77.1 asking
# the one behind the adapter, 02:00:00:00:77:02 / 192.168.77.2
# (ax88179.gadget: 02:00:00:00:79:0N and 192.168.79.N)
def macs(net):
    x = int(str(net), 16)
    return bytes([2, 0, 0, 0, x, 1]), bytes([2, 0, 0, 0, x, 2])


def csum(b):
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def arp_request(net=77, host=2):
    hmac, _ = macs(net)
    return b"\xff" * 6 + hmac + b"\x08\x06" + struct.pack(
        ">HHBBH", 1, 0x0800, 6, 4, 1) + hmac + bytes([192, 168, net, 1]) + \
        bytes(6) + bytes([192, 168, net, host])


def icmp_echo(payload=b"usbrig ping", options=b"", net=77, host=2):
    hmac, dmac = macs(net)
    icmp = struct.pack(">BBHHH", 8, 0, 0, 0x1234, 1) + payload
    icmp = icmp[:2] + struct.pack(">H", csum(icmp)) + icmp[4:]
    hl = 20 + len(options)
    iph = struct.pack(">BBHHHBBH4s4s", 0x40 | hl // 4, 0, hl + len(icmp),
                      7, 0x4000, 64, 1, 0, bytes([192, 168, net, 1]),
                      bytes([192, 168, net, host])) + options
    iph = iph[:10] + struct.pack(">H", csum(iph)) + iph[12:]
    return dmac + hmac + b"\x08\x00" + iph + icmp


def ntb16(frames, seq=1, split=False):
    """an NTB16: NTH16, the datagrams at 4-byte offsets, then one NDP16
    (or one NDP per datagram, chained, with split)"""
    body, idx = b"", []
    off = 12
    for f in frames:
        pad = (-off) % 4
        body += bytes(pad)
        off += pad
        idx.append((off, len(f)))
        body += f
        off += len(f)
    body += bytes((-off) % 4)
    off += (-off) % 4
    groups = [[e] for e in idx] if split else [idx]
    ndps, first = b"", off
    for k, g in enumerate(groups):
        ln = 8 + 4 * (len(g) + 1)
        nxt = 0 if k == len(groups) - 1 else first + len(ndps) + ln
        ndps += struct.pack("<IHH", 0x304d434e, ln, nxt)
        for i, n in g:
            ndps += struct.pack("<HH", i, n)
        ndps += bytes(4)
    total = off + len(ndps)
    return struct.pack("<IHHHH", 0x484d434e, 12, seq, total, first) + \
        body + ndps


def net_frames(net=77):
    """ARP and ping for 192.168.NET.2 (the ether gadgets: 77, ax88179: 79),
    one with IPv4 options, then both for another host"""
    return [arp_request(net), icmp_echo(net=net),
            icmp_echo(bytes(range(200)), bytes([1, 1, 1, 0]), net),
            icmp_echo(net=net, host=9), arp_request(net, 9) + bytes(18)]


def net_traffic(c, name):
    """each frame to the bulk OUT endpoint as the driver frames it, and an
    IN transfer for its reply"""
    for f in net_frames(79 if name == "ax88179" else 77):
        if name == "cdc-ncm":
            c.ep(0x02, len(ntb16([f])), ntb16([f]))
            c.ep(0x81, 2048)
        elif name == "ax88179":
            t = struct.pack("<II", len(f), 0) + f
            c.ep(0x03, len(t), t)
            c.ep(0x82, 2048)
        else:
            c.ep(0x02, len(f), f)
            c.ep(0x81, 1536)
    if name == "cdc-ncm":
        b = ntb16(net_frames()[:3], seq=2, split=True)
        c.ep(0x02, len(b), b)


def ep_traffic(c, eps, alts):
    """a URB or two on each endpoint of the alts last selected, a halt
    and its clearing on the first bulk/interrupt IN; the IN seqnums"""
    last_alt, in_seqs = {}, []
    for intf, alt in alts:
        last_alt[intf] = alt
    for addr, kind, mps, (intf, alt) in eps:
        if last_alt.get(intf) != alt:
            continue
        if kind == "isoc":
            iso = [(k * mps, mps) for k in range(3)]
            c.ep(addr, 3 * mps, bytes(3 * mps), iso=iso)
        elif addr & 0x80:
            in_seqs.append(c.ep(addr, 2 * mps))
        else:
            c.ep(addr, 64, bytes(range(64)))
            c.ep(addr, 0)
    for addr, kind, mps, (intf, alt) in eps:
        if kind != "isoc" and addr & 0x80 and last_alt.get(intf) == alt:
            c.ctrl(0x02, 3, 0, addr, 0)
            c.ep(addr, mps)
            c.ctrl(0x82, 0, 0, addr, 2)
            c.ctrl(0x02, 1, 0, addr, 0)
            break
    return in_seqs


def pdu_session(i, name, desc, cfgs):
    busid = "1-%d" % (i + 1)
    devid = 1 << 16 | (i + 1)
    c = Conn(devid)
    enum_requests(c)
    in_seqs = []
    for value, eps, alts in cfgs:
        config_requests(c, value, alts)
        for rt, req, val, idx, wlen, data in CLASS_REQS.get(name, []):
            c.ctrl(rt, req, val, idx, wlen, data)
        if name == "mass-storage":
            msc_traffic(c)
        if name in ("cdc-ecm", "cdc-ncm", "ax88179"):
            net_traffic(c, name)
        if name == "usbtmc":
            tmc_traffic(c)
        in_seqs += ep_traffic(c, eps, alts)
        if name == "hid-reports":
            for _ in range(6):          # the schedule's reports, later
                c.ep(0x81, 4)
    for s in in_seqs:
        c.unlink(s)
    c.unlink(9999)
    out = rec(0, op_import(busid)) + rec(0, c.out) + rec(0, b"", 0xa0)
    if name == "hid-reports":
        out += rec(0, b"", 0x60) * 8    # 63 ms at a time: one timer each
    return out


def stdreq_session(i, name, desc, cfgs):
    out = bytes([i])

    def ctrl(rt, req, val, idx, wlen, data=b""):
        return bytes([0]) + setup(rt, req, val, idx, wlen) + \
            struct.pack("<H", wlen) + (b"" if rt & 0x80 else
                                       data.ljust(wlen, b"\0"))

    out += ctrl(0x80, 6, 0x0100, 0, 18) + ctrl(0x80, 6, 0x0200, 0, 255)
    out += ctrl(0x80, 6, 0x0302, 0x0409, 255) + ctrl(0x80, 6, 0x0f00, 0, 64)
    for value, eps, alts in cfgs:
        out += ctrl(0x00, 9, value, 0, 0) + ctrl(0x80, 0, 0, 0, 2)
        for intf, alt in alts:
            if alt:
                out += ctrl(0x01, 11, alt, intf, 0) + \
                    ctrl(0x81, 10, 0, intf, 1)
        for rt, req, val, idx, wlen, data in CLASS_REQS.get(name, []):
            out += ctrl(rt, req, val, idx, wlen, data)
        for addr, kind, mps, _ in eps[:4]:
            data = b"" if addr & 0x80 else \
                bytes(range(mps % 256)).ljust(mps)
            out += bytes([1, addr]) + struct.pack("<H", mps) + data
        out += bytes([2, 0])            # unlink the last URB
        out += ctrl(0x02, 3, 0, 0x81, 0) + ctrl(0x82, 0, 0, 0x81, 2)
    out += bytes([3 | 10 << 4])         # 1023 ms later
    out += bytes([3 | 4])               # reconnect
    return out


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def copy(d, src, name=None):
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(src, os.path.join(d, name or os.path.basename(src)))


# ---- captures ----
def pcap(linktype, frames):
    out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype)
    for k, f in enumerate(frames):
        out += struct.pack("<IIII", 1000 + k, 0, len(f), len(f)) + f
    return out


def mon(linktype, uid, typ, xfer, ep, dev, stp, status, length, data):
    hdr = struct.pack("<QBBBBHbbqiiII", uid, ord(typ), xfer, ep, dev, 1,
                      0 if stp else 1, 0 if data or typ == "C" else 1,
                      1000, 0, status, length, len(data))
    hdr += stp or b"\0" * 8
    if linktype == 220:
        hdr += struct.pack("<iiII", 0, 0, 0, 0)
    return hdr + data


def usbpcap(irp, status, function, info, ep, xfer, data, stage=None):
    hl = 27 if stage is None else 28
    h = struct.pack("<HQIHBHHBBI", hl, irp, status, function, info, 1, 5,
                    ep, xfer, len(data))
    if stage is not None:
        h += bytes([stage])
    return h + data


def capture_frames(desc, linktype):
    """GET_DESCRIPTOR device, config (9 and whole), string 0 and 1"""
    reqs = [(0x0100, 0, 18, desc["device"]),
            (0x0200, 0, 9, desc["config 0"][:9]),
            (0x0200, 0, len(desc["config 0"]), desc["config 0"])]
    if "string 0" in desc:
        reqs.append((0x0300, 0, 255, desc["string 0"]))
    if "string 1" in desc:
        reqs.append((0x0301, 0x0409, 255, desc["string 1"]))
    frames = []
    for k, (val, idx, wlen, data) in enumerate(reqs):
        uid = 0xffff888100000000 + k * 0x100
        if linktype == 249:
            stp = setup(0x80, 6, val, idx, wlen)
            frames.append(usbpcap(uid, 0, 0x0b, 0, 0x80, 2, stp, 0))
            frames.append(usbpcap(uid, 0, 0x0b, 1, 0x80, 2, data, 3))
        else:
            frames.append(mon(linktype, uid, "S", 2, 0x80, 5,
                              setup(0x80, 6, val, idx, wlen), -115, wlen,
                              b""))
            frames.append(mon(linktype, uid, "C", 2, 0x80, 5, None, 0,
                              len(data), data))
    return frames


def usbmon_text(desc):
    lines, t = [], 1000000
    for k, (val, wlen, data) in enumerate(
            [(0x0100, 18, desc["device"]),
             (0x0200, 9, desc["config 0"][:9]),
             (0x0200, len(desc["config 0"]), desc["config 0"])]):
        tag = "ffff8881%08x" % (k * 0x100)
        lines.append("%s %d S Ci:1:005:0 s 80 06 %04x 0000 %04x %d <" %
                     (tag, t, val, wlen, wlen))
        words = [data[j:j + 4].hex() for j in range(0, min(len(data), 32), 4)]
        lines.append("%s %d C Ci:1:005:0 0 %d = %s" %
                     (tag, t + 41, len(data), " ".join(words)))
        t += 100
    return ("\n".join(lines) + "\n").encode()


def main():
    gadget_bin = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else "tests/fuzz/corpus"
    for f in glob.glob(os.path.join(corpus, "*", "gen-*")):
        os.remove(f)
    dumps = {n: dump(gadget_bin, n) for n in GADGETS}

    d = os.path.join(corpus, "fuzz_pdu")
    for i, n in enumerate(GADGETS):
        write(d, "gen-session-%s" % n, pdu_session(i, n, *dumps[n]))
    write(d, "gen-devlist", rec(0, op(0x8005)))
    write(d, "gen-devlist-bad-version", rec(0, op(0x8005, 0x0106)))
    write(d, "gen-import-nodev", rec(0, op_import("9-9")))
    write(d, "gen-unknown-op", rec(0, op(0x8004)))
    # the same gadget imported twice: the second is busy; then freed
    write(d, "gen-import-busy",
          rec(0, op_import("1-2")) + rec(1, op_import("1-2")) +
          rec(0, b"", 4) + rec(2, op_import("1-2")) + rec(3, op(0x8005)))
    ev = GADGETS.index("everything") + 1    # everything.gadget: 1-16
    c = Conn(1 << 16 | ev)
    c.ctrl(0x00, 9, 1, 0, 0)
    v1 = c.ep(0x85, 512)           # NAKs until unlinked
    v2 = c.ctrl(0xc0, 3, 0x1234, 0, 4)   # 20 ms late
    c.ep(0x82, 100)                # source, 3 ms late
    c.ep(0x02, 16, b"sink data 16 by")   # sink, 2 ms late
    c.ep(0x01, 16, b"loopback data 16")
    c.ep(0x81, 64)
    c.unlink(v1)
    c.unlink(v2)
    c.ctrl(0xc0, 3, 0x1234, 0, 4)
    write(d, "gen-delay-unlink",
          rec(0, op_import("1-%d" % ev)) + rec(0, c.out, 0x30) +
          rec(0, b"", 0x60) + rec(0, b"", 0xd0))
    bad = Conn(1 << 16 | 1)
    bad.ctrl(0x80, 6, 0x0100, 0, 18)
    write(d, "gen-wrong-devid", rec(0, op_import("1-2")) + rec(0, bad.out))
    write(d, "gen-eof-in-pdu",
          rec(0, op_import("1-1")) + rec(0, bad.out[:30], 8))
    big = Conn(1 << 16 | 1)
    big.ctrl(0x00, 9, 1, 0, 0)
    big.ep(0x81, 1 << 20)          # zero: source, 1 MiB IN
    big.ep(0x02, 4096, bytes(4096))
    write(d, "gen-big-in", rec(0, op_import("1-1")) + rec(0, big.out))

    d = os.path.join(corpus, "fuzz_net")
    for k, f in enumerate(net_frames()):
        write(d, "gen-frame-%d" % k, b"\0" + f)
    write(d, "gen-frame-padded", b"\0" + icmp_echo(b"") + bytes(20))
    write(d, "gen-ntb-one", b"\1" + ntb16(net_frames()[:3]))
    write(d, "gen-ntb-chained", b"\1" + ntb16(net_frames(), split=True))

    d = os.path.join(corpus, "fuzz_stdreq")
    for i, n in enumerate(GADGETS):
        write(d, "gen-%s" % n, stdreq_session(i, n, *dumps[n]))

    d = os.path.join(corpus, "fuzz_script")
    for f in sorted(glob.glob("gadgets/examples/*.gadget")):
        copy(d, f, "examples-" + os.path.basename(f))
    copy(d, "tests/fuzz/everything.gadget", "fuzz-everything.gadget")
    copy(d, "tests/fuzz/hid-reports.gadget", "fuzz-hid-reports.gadget")

    d = os.path.join(corpus, "fuzz_scenario")
    for pat, pre in (("tests/scenarios/*.scenario", "scenarios-"),
                     ("tests/demo/*.scenario", "demo-"),
                     ("tests/census/spot/*.scenario", "census-spot-")):
        for f in sorted(glob.glob(pat)):
            copy(d, f, pre + os.path.basename(f))

    d = os.path.join(corpus, "fuzz_import_lsusb")
    for f in sorted(glob.glob("tests/data/import/lsusb/*")):
        if not f.endswith("README"):
            copy(d, f, "import-lsusb-" + os.path.basename(f))
    for f in sorted(glob.glob("tests/data/devices/*.lsusb"))[::4]:
        copy(d, f, "devices-" + os.path.basename(f))
    for f in sorted(glob.glob("tests/repro/*.lsusb")):
        copy(d, f, "repro-" + os.path.basename(f))

    d = os.path.join(corpus, "fuzz_import_usbmon")
    for f in sorted(glob.glob("tests/data/devices/captures/*.usbmon")):
        copy(d, f, "captures-" + os.path.basename(f))
    for f in sorted(glob.glob("tests/data/import/*.[01]u")):
        copy(d, f, "import-" + os.path.basename(f))

    d = os.path.join(corpus, "fuzz_import_devices")
    copy(d, "tests/data/import/three.devices", "import-three.devices")

    d = os.path.join(corpus, "fuzz_import_sysfs")
    dp = os.path.join(corpus, "fuzz_import_pcap")
    du = os.path.join(corpus, "fuzz_import_usbmon")
    for n in ["ftdi", "acm", "composite-iad", "superspeed", "alt-settings",
              "hid-mouse", "malformed-total"]:
        desc = dumps[n][0]
        raw = desc["device"] + desc["config 0"]
        write(d, "gen-%s.bin" % n, raw)
        hexd = "".join("%08x  %s\n" % (j, " ".join(
            "%02x" % b for b in raw[j:j + 16])) for j in range(0, len(raw),
                                                            16))
        write(d, "gen-%s.hex" % n, hexd.encode())
        for lt in (189, 220, 249):
            write(dp, "gen-%s-%d.pcap" % (n, lt),
                  pcap(lt, capture_frames(desc, lt)))
        write(du, "gen-%s.usbmon" % n, usbmon_text(desc))


if __name__ == "__main__":
    main()
