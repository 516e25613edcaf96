import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';

import { RateLimitModule } from '../common/rate-limit';
import { AppConfig, ConfigModule } from '../config';
import { UsersModule } from '../users';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { AuthSettings } from './auth.settings';
import { BasicAuthCache } from './basic-auth-cache';
import { JwtSettings } from './jwt-settings';
import { LoginThrottle } from './login-throttle';
import { PasswordCheckSlots } from './password-check-slots';
import { BasicStrategy } from './strategies/basic.strategy';
import { JwtStrategy } from './strategies/jwt.strategy';
import { TokenService } from './token.service';

/**
 * Signing in (token issue, Basic, Bearer) and GET /me. Other modules protect their routes
 * with @UserAuth() and read the caller with @CurrentUser().
 */
@Module({
  // JwtModule without defaults: the secret and algorithm come from JwtSettings at each call.
  imports: [
    ConfigModule.forFeature(AuthSettings),
    UsersModule,
    PassportModule,
    JwtModule.register({}),
    RateLimitModule,
  ],
  controllers: [AuthController],
  providers: [
    {
      provide: JwtSettings,
      inject: [AuthSettings, AppConfig],
      useFactory: (settings: AuthSettings, config: AppConfig) => JwtSettings.fromSettings(settings, config),
    },
    AuthService,
    TokenService,
    BasicAuthCache,
    LoginThrottle,
    PasswordCheckSlots,
    BasicStrategy,
    JwtStrategy,
  ],
})
export class AuthModule {}
