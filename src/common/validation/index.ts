export { invalidBody, invalidParam, invalidQuery, refusalOf } from './invalid-samples';
export { escapeInvisible, IsPlainText, isPlainText, PLAIN_TEXT_RULE } from './plain-text';
export { strictValidationError, StrictValidationPipe } from './strict-validation.pipe';
export { toInt, trim, trimEach } from './transforms';
export { notAUuid, UuidParam } from './uuid-param';
export {
  ComparedTo,
  FINITE,
  greaterThan,
  IsDateTime,
  isDateTime,
  IsFullDate,
  isFullDate,
  IsOmittable,
  IsUtf8ByteLength,
  utf8Length,
} from './validators';
