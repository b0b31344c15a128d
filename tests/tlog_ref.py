# tests/tlog_ref.py: what the transparency-log tests check calc-audit against, written here
# from the specs and nothing else: RFC 6962's tree hash, PATH and PROOF over leaf hashes,
# signed-note vkeys, and the tally every such test prints its closing line from.
import base64, hashlib, os, shutil, subprocess, sys, tempfile

H = lambda b: hashlib.sha256(b).digest()
leaf_hash = lambda d: H(b"\x00" + d)
node = lambda l, r: H(b"\x01" + l + r)
b64 = lambda b: base64.b64encode(b).decode()


def split(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(lv):
    if not lv:
        return H(b"")
    if len(lv) == 1:
        return lv[0]
    k = split(len(lv))
    return node(mth(lv[:k]), mth(lv[k:]))


def path(m, lv):
    if len(lv) <= 1:
        return []
    k = split(len(lv))
    return path(m, lv[:k]) + [mth(lv[k:])] if m < k else path(m - k, lv[k:]) + [mth(lv[:k])]


def subproof(m, lv, b):
    if m == len(lv):
        return [] if b else [mth(lv)]
    k = split(len(lv))
    if m <= k:
        return subproof(m, lv[:k], b) + [mth(lv[k:])]
    return subproof(m - k, lv[k:], False) + [mth(lv[:k])]


def vkey(name, typ, pk):
    kid = H(name.encode() + b"\n" + bytes([typ]) + pk)[:4]
    return f"{name}+{kid.hex()}+{b64(bytes([typ]) + pk)}"


def openssl_verify(pk, msg, sig):
    """OpenSSL's verdict on an Ed25519 signature (files in the current directory)."""
    der = bytes.fromhex("302a300506032b6570032100") + pk
    pem = "-----BEGIN PUBLIC KEY-----\n" + b64(der) + "\n-----END PUBLIC KEY-----\n"
    for name, data in (("pub.pem", pem.encode()), ("msg", msg), ("sig", sig)):
        with open(name, "wb") as f:
            f.write(data)
    return subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin",
                           "-in", "msg", "-sigfile", "sig"], capture_output=True).returncode == 0


class Tally:
    """The counts, calc-audit (self.run) and calc-route of the build directory B, and a
    directory of the test's own, the current one until close() removes it."""

    def __init__(self, B):
        self.passed = self.failed = self.skipped = 0
        self.route, self.audit = (os.path.join(os.path.abspath(B), x) for x in ("calc-route", "calc-audit"))
        self.tmp = tempfile.mkdtemp()
        os.chdir(self.tmp)

    def run(self, *args):
        p = subprocess.run([self.audit, *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what)

    def skip(self, why):
        print("SKIP", why, file=sys.stderr)
        self.skipped += 1

    def close(self):
        os.chdir("/")
        shutil.rmtree(self.tmp)
        print(f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped")
        sys.exit(1 if self.failed else 0)

