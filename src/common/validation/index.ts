export { IsPlainText, PLAIN_TEXT_RULE } from './plain-text';
export { StrictValidationPipe } from './strict-validation.pipe';
export { toInt, trim } from './transforms';
export { UuidParam } from './uuid-param';
export {
  ComparedTo,
  FINITE,
  greaterThan,
  IsDateTime,
  isDateTime,
  IsOmittable,
  IsUtf8ByteLength,
  utf8Length,
} from './validators';
