;;; run-tests.el --- Run the ERT tests and write their results as JSON  -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs --batch -Q -L editors/emacs -L editors/emacs/test -l run-tests.el
;; runs every test of claude-bridge-test.el (or those named, space-separated,
;; in CLAUDE_BRIDGE_TEST_SELECT) and writes {name: {status, message}} to the
;; file CLAUDE_BRIDGE_TEST_RESULTS, so that pytest reports each test by name.

;;; Code:

(require 'ert)
(require 'claude-bridge-test)

(let* ((names (split-string (or (getenv "CLAUDE_BRIDGE_TEST_SELECT") "")))
       (selector (if names `(member ,@(mapcar #'intern names)) "^claude-bridge-test-"))
       (stats (ert-run-tests-batch selector))
       (results (make-hash-table :test #'equal)))
  (mapc (lambda (test)
          (let* ((result (ert-test-most-recent-result test))
                 (status (cond ((ert-test-passed-p result) "passed")
                               ((ert-test-skipped-p result) "skipped")
                               ((ert-test-failed-p result) "failed")
                               (t "unknown")))
                 (message (if (ert-test-result-with-condition-p result)
                              (format "%S" (ert-test-result-with-condition-condition result))
                            "")))
            (puthash (symbol-name (ert-test-name test))
                     (list :status status :message message
                           :seconds (float-time
                                     (time-subtract
                                      (aref (ert--stats-test-end-times stats)
                                            (ert--stats-test-pos stats test))
                                      (aref (ert--stats-test-start-times stats)
                                            (ert--stats-test-pos stats test)))))
                     results)))
        (ert--stats-tests stats))
  (with-temp-file (getenv "CLAUDE_BRIDGE_TEST_RESULTS")
    (insert (json-serialize results)))
  (kill-emacs 0))

;;; run-tests.el ends here
