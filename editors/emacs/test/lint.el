;;; lint.el --- Byte-compile, checkdoc and package-lint the package  -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs --batch -Q -L editors/emacs -l editors/emacs/test/lint.el
;; prints every warning of the byte compiler, checkdoc and package-lint
;; (Debian's elpa-package-lint) about the package's files, and exits 1
;; if there is any.

;;; Code:

(require 'cl-lib)
(require 'checkdoc)
(require 'bytecomp)

(let* ((dir (file-name-as-directory
             (expand-file-name ".." (file-name-directory load-file-name))))
       (files (mapcar (lambda (f) (expand-file-name f dir))
                      '("claude-bridge-client.el" "claude-bridge-model.el"
                        "claude-bridge-protocol.el" "claude-bridge-permission.el"
                        "claude-bridge-view.el" "claude-bridge-commands.el"
                        "claude-bridge.el")))
       (problems nil))
  (add-to-list 'load-path dir)
  (dolist (d (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/package-lint-*"))
    (add-to-list 'load-path d))
  (require 'package-lint)
  ;; Byte-compile: every warning is a problem.
  (let ((byte-compile-log-warning-function
         (lambda (string &optional position fill _level)
           (ignore position fill)
           (push (format "byte-compile: %s" string) problems)
           t)))
    (dolist (file files)
      (let ((byte-compile-dest-file-function
             (lambda (_) (make-temp-file "claude-bridge-lint" nil ".elc"))))
        (unless (byte-compile-file file)
          (push (format "byte-compile: %s failed" file) problems)))))
  ;; checkdoc.
  (dolist (file files)
    (let ((checkdoc-create-error-function
           (lambda (text start _end &optional _unfixable)
             (push (format "checkdoc: %s:%s: %s" (file-name-nondirectory file)
                           (line-number-at-pos start) text)
                   problems)
             nil))
          (checkdoc-autofix-flag 'never))
      (with-current-buffer (find-file-noselect file)
        (checkdoc-current-buffer t))))
  ;; package-lint, the main file being claude-bridge.el.  Debian 12's
  ;; package-lint 0.16 predates Emacs 28.1 and warns that depending on
  ;; (emacs "28.1") makes the package "uninstallable in all released Emacs
  ;; versions": that one warning is out of date, every other one counts.
  (let ((package-lint-main-file (car (last files))))
    (dolist (file files)
      (with-current-buffer (find-file-noselect file)
        (dolist (p (cl-remove-if
                    (lambda (p)
                      (and (equal (nth 3 p) "This makes the package uninstallable \
in all released Emacs versions.")
                           (save-excursion
                             (goto-char (point-min))
                             (forward-line (1- (nth 0 p)))
                             (looking-at-p ";; Package-Requires: ((emacs \"28.1\"))"))))
                    (package-lint-buffer)))
          (push (format "package-lint: %s:%s:%s: %s: %s"
                        (file-name-nondirectory file) (nth 0 p) (nth 1 p)
                        (nth 2 p) (nth 3 p))
                problems)))))
  (dolist (p (reverse problems)) (princ (concat p "\n")))
  (princ (format "lint: %d problem(s)\n" (length problems)))
  (kill-emacs (if problems 1 0)))

;;; lint.el ends here
