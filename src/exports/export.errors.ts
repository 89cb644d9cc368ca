import { AppError } from '../core/errors.js';

/** How many ids the 422 for unusable external ids names before it ends with `, …`. */
export const LISTED_IDS = 20;

export const nothingToExportMessage = (year: number | string) =>
  `Nothing to export: year ${year} has no modules`;

export const unusableExternalIdsMessage = (ids: readonly number[]) =>
  `Users without a usable external_id: ${ids.slice(0, LISTED_IDS).join(', ')}${ids.length > LISTED_IDS ? ', …' : ''}`;

export const tooManyDroppedMessage = (
  dropped: number | string,
  previous: number | string,
  limit: number | string,
) => `Export would drop ${dropped} of ${previous} enrollments; the limit is ${limit}%`;

/** A year without modules: a zip would hold no class, and its consumer would remove every course. */
export class NothingToExport extends AppError {
  constructor(year: number) {
    super(422, nothingToExportMessage(year));
  }
}

/** `user_key=external_id` with users whose `external_id` is null or not usable as an id (never a fallback). */
export class UnusableExternalIds extends AppError {
  constructor(ids: readonly number[]) {
    super(422, unusableExternalIdsMessage(ids));
  }
}

/** `max_drop` exceeded: the export would unenrol more people in the LMS than allowed. */
export class TooManyDropped extends AppError {
  constructor(dropped: number, previous: number, limit: number) {
    super(409, tooManyDroppedMessage(dropped, previous, limit));
  }
}
