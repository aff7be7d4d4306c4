import { passwordProblem } from '../../../src/auth/account/password-policy.js';

describe('passwordProblem', () => {
  it.each([
    ['a good password', 'Correct-Horse-1', 'alice', 8, undefined],
    ['exactly the minimum', '12345678', 'alice', 8, undefined],
    ['one short', '1234567', 'alice', 8, 'must be at least 8 characters (passwordPolicy.minLength)'],
    ['short under a stricter policy', 'Correct-Horse', 'alice', 16, 'must be at least 16 characters'],
    ['characters, not bytes, for the minimum', 'ééééééé', 'alice', 7, undefined],
    ['72 bytes', 'x'.repeat(72), 'alice', 8, undefined],
    ['73 bytes', 'x'.repeat(73), 'alice', 8, 'must be at most 72 bytes in UTF-8 (bcrypt reads no more)'],
    ['37 two-byte characters', 'é'.repeat(37), 'alice', 8, 'must be at most 72 bytes'],
    ['a NUL', 'Correct\u0000Horse', 'alice', 8, 'must not contain control characters'],
    ['a newline', 'Correct-Horse\n', 'alice', 8, 'must not contain control characters'],
    ['the user name', 'alice-smith', 'alice-smith', 8, 'must not be the user name'],
    ['the user name in capitals', 'ALICE-SMITH', 'alice-smith', 8, 'must not be the user name'],
  ])('when the password is %s, then the problem is %p', (_case, password, username, minLength, problem) => {
    const found = passwordProblem(password, username, { minLength });
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
    if (found) expect(found).not.toContain(password);
  });
});
