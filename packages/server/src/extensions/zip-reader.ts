import yauzl from "yauzl";

/** An archive opened by yauzl, the second, independent zip reader. */
export type ZipFile = yauzl.ZipFile;
/** One central-directory entry as yauzl reads it. */
export type Entry = yauzl.Entry;

/** Opens `path` with entry sizes validated while inflating and names left as bytes. */
export function openZip(path: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false }, (error, zip) => {
      if (error) reject(error);
      else resolve(zip);
    });
  });
}

/** Every central-directory entry as yauzl lists them (it trusts the end record's count). */
export function readEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on("entry", (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on("end", () => resolve(entries));
    zip.on("error", reject);
    zip.readEntry();
  });
}
