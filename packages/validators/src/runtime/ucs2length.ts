/**
 * The length of a string in Unicode code points, as JSON Schema counts it for
 * `minLength` and `maxLength`: a surrogate pair (an emoji, say) is one character.
 */
export function ucs2length(value: string): number {
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    length++;
    const code = value.charCodeAt(i);
    const isHighSurrogate = code >= 0xd800 && code <= 0xdbff;
    if (isHighSurrogate && i + 1 < value.length && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return length;
}
