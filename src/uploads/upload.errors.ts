import {
  fixedError,
  REQUEST_BODY_TOO_LARGE_MESSAGE,
  UNSUPPORTED_CONTENT_TYPE_MESSAGE,
} from '../core/errors.js';

export const NO_FILE_UPLOADED_MESSAGE = 'No file uploaded';
export const TOO_MANY_FILES_MESSAGE = 'Only one file may be uploaded';
export const MALFORMED_MULTIPART_MESSAGE = 'Malformed multipart body';

/** A body of a content type the route does not take (docs/api.md §1, step 0). */
export class UnsupportedContentType extends fixedError(415, UNSUPPORTED_CONTENT_TYPE_MESSAGE) {}

export class NoFileUploaded extends fixedError(400, NO_FILE_UPLOADED_MESSAGE) {}

export class TooManyFiles extends fixedError(400, TOO_MANY_FILES_MESSAGE) {}

/** A multipart body that breaks off or does not parse (missing boundary, truncated part). */
export class MalformedMultipart extends fixedError(400, MALFORMED_MULTIPART_MESSAGE) {}

/** More parts than the service reads in one upload. */
export class TooManyParts extends fixedError(413, REQUEST_BODY_TOO_LARGE_MESSAGE) {}
