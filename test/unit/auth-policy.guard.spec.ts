import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

import { authPolicy, AuthPolicyGuard, Public } from '../../src/common/auth/auth-policy';
import { ForbiddenError } from '../../src/common/problem/problem';

class Controller {
  open() {}
  keyed() {}
  forgotten() {}
}
Public()(Controller.prototype, 'open', Object.getOwnPropertyDescriptor(Controller.prototype, 'open')!);
class AnyGuard implements CanActivate {
  canActivate() {
    return true;
  }
}
authPolicy('region-api-key', { guard: AnyGuard, schemes: [], with: [] })(
  Controller.prototype,
  'keyed',
  Object.getOwnPropertyDescriptor(Controller.prototype, 'keyed'),
);

const contextFor = (handler: () => void, cls: object = Controller) =>
  ({ getHandler: () => handler, getClass: () => cls }) as unknown as ExecutionContext;

describe('AuthPolicyGuard (deny by default)', () => {
  const guard = new AuthPolicyGuard(new Reflector());

  it('lets through routes that declare a policy', () => {
    expect(guard.canActivate(contextFor(Controller.prototype.open))).toBe(true);
    expect(guard.canActivate(contextFor(Controller.prototype.keyed))).toBe(true);
  });

  it('refuses a route that declares none', () => {
    expect(() => guard.canActivate(contextFor(Controller.prototype.forgotten))).toThrow(ForbiddenError);
  });

  it('honours a policy declared on the controller class', () => {
    class PublicController {
      any() {}
    }
    Public()(PublicController);
    expect(guard.canActivate(contextFor(PublicController.prototype.any, PublicController))).toBe(true);
  });
});
