import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseTotpSecret, TotpSecretError, totpCode } from "../src/credentials/totp.js";
import { SecretBox, SecretOpenError } from "../src/secrets/secret-box.js";
import { loadSecretsKey, SecretsKeyError } from "../src/secrets/secrets-key.js";

// The parts credentials rest on, attacked alone: the sealing of stored secrets, the key
// file, and TOTP against RFC 6238's own test vectors.

const base32 = (bytes: Buffer): string => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const byte of bytes) bits += byte.toString(2).padStart(8, "0");
  let out = "";
  for (let i = 0; i < bits.length; i += 5) out += alphabet[Number.parseInt(bits.slice(i, i + 5).padEnd(5, "0"), 2)];
  return out;
};

describe("SecretBox (AES-256-GCM)", () => {
  const box = new SecretBox(randomBytes(32));

  it("opens what it sealed for the same context, and a fresh IV each time", () => {
    const sealed = box.seal("hunter2", "row-1");
    expect(sealed).not.toContain("hunter2");
    expect(box.open(sealed, "row-1")).toBe("hunter2");
    expect(box.seal("hunter2", "row-1")).not.toBe(sealed);
  });

  it("refuses another context, another key, and any changed byte", () => {
    const sealed = box.seal("hunter2", "row-1");
    expect(() => box.open(sealed, "row-2")).toThrow(SecretOpenError);
    expect(() => new SecretBox(randomBytes(32)).open(sealed, "row-1")).toThrow(SecretOpenError);
    const bytes = Buffer.from(sealed.slice(3), "base64url");
    for (const at of [0, 12, 28, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at] = (changed[at] ?? 0) ^ 1;
      expect(() => box.open(`v1.${changed.toString("base64url")}`, "row-1")).toThrow(SecretOpenError);
    }
    for (const junk of ["", "v1.", "v2.abc", "v1.AAAA", sealed.slice(0, 20)]) expect(() => box.open(junk, "row-1")).toThrow(SecretOpenError);
  });

  it("takes only a 32-byte key", () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(RangeError);
  });
});

describe("the secrets key file", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dir = () => {
    const made = mkdtempSync(join(tmpdir(), "secrets-key-"));
    dirs.push(made);
    return made;
  };

  it("is made once, private (0600), and read back unchanged", () => {
    const file = join(dir(), "secrets.key");
    const made = loadSecretsKey(file, undefined);
    expect(made.created).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = loadSecretsKey(file, undefined);
    expect(again.created).toBe(false);
    expect(again.key.equals(made.key)).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(`${made.key.toString("hex")}\n`);
  });

  it("refuses a key file others can read, a malformed one, and a symbolic link, changing none", () => {
    const here = dir();
    const file = join(here, "secrets.key");
    const key = loadSecretsKey(file, undefined).key;
    chmodSync(file, 0o644);
    expect(() => loadSecretsKey(file, undefined)).toThrow(/chmod 600/);
    chmodSync(file, 0o600);
    writeFileSync(join(here, "bad.key"), "not a key\n", { mode: 0o600 });
    expect(() => loadSecretsKey(join(here, "bad.key"), undefined)).toThrow(SecretsKeyError);
    const link = join(here, "link.key");
    symlinkSync(file, link);
    expect(() => loadSecretsKey(link, undefined)).toThrow();
    expect(readFileSync(file, "utf8")).toBe(`${key.toString("hex")}\n`);
  });

  it("takes a given key instead of the file, and refuses a malformed one", () => {
    const file = join(dir(), "secrets.key");
    const given = randomBytes(32).toString("hex");
    expect(loadSecretsKey(file, given).key.toString("hex")).toBe(given);
    expect(() => statSync(file)).toThrow();
    expect(() => loadSecretsKey(file, "abc")).toThrow(/64 hex characters/);
  });
});

describe("TOTP (RFC 6238)", () => {
  // Appendix B: the seeds are these ASCII strings, 8 digits, 30 s.
  const seeds = {
    SHA1: Buffer.from("12345678901234567890"),
    SHA256: Buffer.from("12345678901234567890123456789012"),
    SHA512: Buffer.from("1234567890123456789012345678901234567890123456789012345678901234"),
  };
  const vectors: [number, string, string, string][] = [
    [59, "94287082", "46119246", "90693936"],
    [1111111109, "07081804", "68084774", "25091201"],
    [1111111111, "14050471", "67062674", "99943326"],
    [1234567890, "89005924", "91819424", "93441116"],
    [2000000000, "69279037", "90698825", "38618901"],
    [20000000000, "65353130", "77737706", "47863826"],
  ];

  it.each(vectors)("at %i s gives the RFC's codes for SHA1, SHA256 and SHA512", (seconds, sha1, sha256, sha512) => {
    const expected = { SHA1: sha1, SHA256: sha256, SHA512: sha512 };
    for (const algorithm of ["SHA1", "SHA256", "SHA512"] as const) {
      const settings = parseTotpSecret(`otpauth://totp/test?secret=${base32(seeds[algorithm])}&algorithm=${algorithm}&digits=8&period=30`);
      expect(totpCode(settings, seconds * 1000).code).toBe(expected[algorithm]);
    }
  });

  it("says when a code expires: the end of its period", () => {
    const settings = parseTotpSecret(base32(seeds.SHA1));
    expect(totpCode(settings, 59_000).expires_at).toBe(new Date(60_000).toISOString());
    expect(totpCode(settings, 60_000).expires_at).toBe(new Date(90_000).toISOString());
  });

  it("reads base32 written as people write it: spaces, dashes, lower case, padding", () => {
    const secret = base32(seeds.SHA1);
    const written = `${secret.toLowerCase().replace(/(.{4})/g, "$1 ")}==`.replace(" ", "-");
    expect(parseTotpSecret(written)).toEqual(parseTotpSecret(secret));
    expect(parseTotpSecret(secret)).toEqual({ secret, algorithm: "SHA1", digits: 6, period: 30 });
    // An independent HMAC-SHA1 of counter 1 (t = 59 s), truncated as RFC 4226 5.3 says.
    const hmac = createHmac("sha1", seeds.SHA1)
      .update(Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]))
      .digest();
    const offset = (hmac[19] ?? 0) & 0xf;
    const value = (hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
    expect(totpCode(parseTotpSecret(written), 59_000).code).toBe(String(value).padStart(6, "0"));
  });

  it("refuses what is not a usable secret, never quoting it", () => {
    for (const bad of [
      "not base32!",
      "ABCDEFGH",
      "A".repeat(300),
      "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&counter=1",
      "otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&algorithm=MD5",
      "otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&digits=4",
      "otpauth://totp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DP&period=0",
      "otpauth://totp/x?secret=JBSW",
      "otpauth://totp/x",
      "otpauth:garbage",
    ]) {
      const error = (() => {
        try {
          parseTotpSecret(bad);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error, bad).toBeInstanceOf(TotpSecretError);
      expect((error as Error).message).not.toContain(bad);
    }
  });
});
