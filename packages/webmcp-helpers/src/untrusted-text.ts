/** Opening tag of a block of page-provided text in what this package writes for a model. */
export const untrustedOpen = "<untrusted-page-text>";
/** Closing tag of a block of page-provided text. */
export const untrustedClose = "</untrusted-page-text>";

// Characters a page can use to hide text from a person reading the prompt, or to confuse
// the model about where a block ends: C0/C1 controls (but tab and newline), zero-width
// and bidirectional formatting characters, invisible operators, the byte order mark,
// interlinear annotations, and the Unicode tag block ("ASCII smuggling").
const invisible =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing controls is the point; not \p{Cc}, which would also take tab, \n and \r.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]|[\u{E0000}-\u{E007F}]/gu;
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const lineBreaks = /\r\n?|[\u2028\u2029\u0085]/g;
// A page must not be able to close the block early, or open a fake one.
const fenceTag = /<(\/?untrusted-page-text)/gi;

/** How {@link cleanPageText} treats one field. */
export interface CleanOptions {
  /** Longest result in UTF-16 units before the truncation note. */
  maxLength: number;
  /** Keep line breaks (descriptions, outputs); single-line fields turn them into spaces. */
  multiline?: boolean;
}

/**
 * Page-provided text made safe to show: cut to `maxLength` first (so a megabyte-long
 * description costs no more than a short one), then stripped of invisible and control
 * characters, with fence tags neutralized and a note saying how much was cut.
 */
export function cleanPageText(text: string, { maxLength, multiline = false }: CleanOptions): string {
  let cut = text.length > maxLength ? text.slice(0, maxLength) : text;
  // Never split a surrogate pair at the cut; the lone half would be removed anyway.
  if (cut.length < text.length && /[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  let clean = cut.replace(lineBreaks, "\n").replace(invisible, "").replace(loneSurrogate, "").replace(fenceTag, "‹$1");
  clean = multiline ? clean.replace(/\t/g, "  ") : clean.replace(/[\t\n]+/g, " ");
  return cut.length < text.length ? `${clean}… [${text.length - cut.length} more characters cut]` : clean;
}

/**
 * Page-provided text inside an untrusted block, for a model prompt. Single-line text
 * stays on the line (`<untrusted-page-text>add_to_cart</untrusted-page-text>`);
 * multi-line text gets the tags on lines of their own.
 */
export function fenceUntrusted(text: string, options: CleanOptions): string {
  const clean = cleanPageText(text, options);
  return options.multiline ? `${untrustedOpen}\n${clean}\n${untrustedClose}` : `${untrustedOpen}${clean}${untrustedClose}`;
}
