import {
  AppError,
  REQUEST_BODY_TOO_LARGE_MESSAGE,
  UNSUPPORTED_CONTENT_TYPE_MESSAGE,
  ValidationFailed,
} from '../core/errors.js';

export const NO_FILE_UPLOADED_MESSAGE = 'No file uploaded';
export const TOO_MANY_FILES_MESSAGE = 'Only one file may be uploaded';
export const MALFORMED_MULTIPART_MESSAGE = 'Malformed multipart body';

/** A body of a content type the route does not take (docs/api.md §1, step 0). */
export class UnsupportedContentType extends AppError {
  constructor() {
    super(415, UNSUPPORTED_CONTENT_TYPE_MESSAGE);
  }
}

export class NoFileUploaded extends ValidationFailed {
  constructor() {
    super(NO_FILE_UPLOADED_MESSAGE);
  }
}

export class TooManyFiles extends ValidationFailed {
  constructor() {
    super(TOO_MANY_FILES_MESSAGE);
  }
}

/** A multipart body that breaks off or does not parse (missing boundary, truncated part). */
export class MalformedMultipart extends ValidationFailed {
  constructor() {
    super(MALFORMED_MULTIPART_MESSAGE);
  }
}

/** More parts than the service reads in one upload. */
export class TooManyParts extends AppError {
  constructor() {
    super(413, REQUEST_BODY_TOO_LARGE_MESSAGE);
  }
}
