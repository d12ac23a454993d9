/**
 * The general-purpose flag bits (APPNOTE.TXT 4.4.4) that the archive checks read, each
 * with the rule it falls under. `mustMatch`: the bit changes how a tool reads the entry,
 * so a local header must repeat its central record's bit. `encryption`: the entry cannot
 * be read without a key. The masks below are derived from this table.
 */
export const GENERAL_PURPOSE_FLAGS = {
  /** Bit 0: the entry is encrypted. */
  encrypted: { bit: 0x0001, mustMatch: true, encryption: true },
  /** Bit 3: the CRC-32 and sizes follow the data in a data descriptor; the local header may leave them 0. */
  dataDescriptor: { bit: 0x0008, mustMatch: true, encryption: false },
  /** Bit 6: strong encryption (which also sets bit 0). */
  strongEncryption: { bit: 0x0040, mustMatch: false, encryption: true },
  /** Bit 11: the name is UTF-8 (otherwise IBM code page 437). */
  utf8Name: { bit: 0x0800, mustMatch: true, encryption: false },
  /** Bit 13: the central directory is encrypted, and the local headers' values masked. */
  encryptedCentralDirectory: { bit: 0x2000, mustMatch: false, encryption: true },
} as const;

/** The rules a general-purpose flag bit may fall under (see {@link GENERAL_PURPOSE_FLAGS}). */
type FlagRule = "mustMatch" | "encryption";

function maskOf(rule: FlagRule): number {
  return Object.values(GENERAL_PURPOSE_FLAGS).reduce((mask, flag) => (flag[rule] ? mask | flag.bit : mask), 0);
}

/** The flag bits a local header must share with its central record: encrypted, data descriptor, UTF-8 name. */
export const MATCHING_FLAGS = maskOf("mustMatch");

/** The flag bits any of which makes an entry encrypted. */
export const ENCRYPTION_FLAGS = maskOf("encryption");

/**
 * Field values with every bit set (APPNOTE.TXT 4.4.1.4): the field holds no value, the
 * real one is in a ZIP64 record.
 */
export const ZIP64_SENTINEL = { u16: 0xffff, u32: 0xffffffff } as const;

/** Ids of the extra fields the checks read (APPNOTE.TXT 4.5.2, 4.6.9). */
export const EXTRA_FIELD_ID = {
  /** ZIP64 sizes and offsets. */
  zip64: 0x0001,
  /** Info-ZIP's Unicode path, which unzip extracts under instead of the name. */
  unicodePath: 0x7075,
} as const;

/** The compression methods (APPNOTE.TXT 4.4.5) every unzip tool reads. */
export const COMPRESSION_METHOD = { stored: 0, deflate: 8 } as const;
