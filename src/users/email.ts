/** Emails are kept and compared trimmed and lower-cased: "Ann@X.org " is "ann@x.org". */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export const EMAIL_MAX_LENGTH = 254;
