import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length } from 'class-validator';
import { IsPlainText, PLAIN_TEXT_RULE } from '../../common/validation/plain-text';

export class CreateApiKeyDto {
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: 255,
    description: `What the key is for. Trimmed; absent or null means no description. ${PLAIN_TEXT_RULE}`,
    example: 'Timetable sync (production)',
  })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsOptional()
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  description?: string | null;
}
