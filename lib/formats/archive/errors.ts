/** Machine codes of every failure the archive domain reports; the API layer maps them to problem details. */
export type ArchiveErrorCode =
  /** A payload path is empty, absolute, has `.`/`..`/empty segments or a NUL (422). */
  | 'INVALID_PAYLOAD_PATH'
  /** Two payload files share a path, or a file path is also used as a directory (422). */
  | 'DUPLICATE_PAYLOAD_PATH'
  /** A streamed payload file yielded more or fewer bytes than it declared (a bug or a changed source). */
  | 'PAYLOAD_SIZE_MISMATCH'
  /** A path does not fit the ustar name and prefix fields (422). */
  | 'PATH_TOO_LONG'
  /** A file is larger than a ustar size field can state (8 GiB - 1) (413). */
  | 'ENTRY_TOO_LARGE'
  /** The bag's top-level directory name is not one safe path segment (422). */
  | 'INVALID_BAG_NAME'
  /** A bag-info value is empty or spans lines (422). */
  | 'INVALID_BAG_INFO'
  /** The bagging instant is not an RFC 3339 UTC instant on or after 1970-01-01 (422). */
  | 'INVALID_BAGGING_DATE'
  /** The summary of a bag was asked for before all its bytes were read. */
  | 'BAG_INCOMPLETE'
  /** The data gathered for a snapshot lacks a part or has one of the wrong shape (422). */
  | 'INVALID_SNAPSHOT_CONTENT'
  /** A notarization is not a signed JSON document with the expected members (422). */
  | 'NOTARIZATION_MALFORMED'
  /** The notarization names a key the given keyring does not hold. */
  | 'NOTARY_KEY_UNKNOWN'
  /** The notary key was not in force at `notarized_at` (not yet issued, expired or revoked). */
  | 'NOTARY_KEY_NOT_VALID'
  /** The notarization's signature does not verify. */
  | 'NOTARIZATION_SIGNATURE_INVALID'
  /** The notarization is over other bytes than the bag at hand. */
  | 'NOTARIZATION_DIGEST_MISMATCH';

export class ArchiveError extends Error {
  constructor(
    readonly code: ArchiveErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ArchiveError';
  }
}
