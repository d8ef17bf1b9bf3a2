-- notebridge schema 0021: an app breaker opened on a guess. OneNote's 429s need not say whose budget
-- ran out; when one account's unscoped 429 comes while other accounts are sending, the app breaker
-- opens too, naming that account here, so that another account's request (not the guesser's own)
-- is the probe that confirms or clears it. NULL: the service said `Application`, or two accounts
-- were refused at once.
ALTER TABLE limiter_breakers ADD COLUMN inferred_from TEXT;
