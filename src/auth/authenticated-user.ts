/** The signed-in user of a request (Basic or Bearer), as guards hand it to controllers. */
export interface AuthenticatedUser {
  id: number;
  name: string | null;
  email: string;
}
