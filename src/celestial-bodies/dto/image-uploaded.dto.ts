import { ApiSchema } from '@nestjs/swagger';

import { ApiDateTime, ApiInteger, ApiUri } from '../../common/swagger';
import type { ImageType } from '../image-upload';

/** The Galaxy `ImageUploadedMessage`. */
@ApiSchema({ name: 'ImageUploadedMessage' })
export class ImageUploadedDto {
  /** @example 'Image uploaded successfully' */
  message: string;

  /**
   * Where the image can be fetched (GET, public).
   * @example https://api.example.org/planets/1/image
   */
  @ApiUri()
  imageUrl: string;

  /** @example 2024-01-15T14:30:00.000Z */
  @ApiDateTime()
  uploadedAt: string;

  /**
   * Size of the image in bytes
   * @example 1048576
   */
  @ApiInteger()
  fileSize: number;

  /**
   * The type detected from the image's bytes
   * @example image/jpeg
   */
  mimeType: ImageType;
}
