;;; claude-bridge-view.el --- The chat buffer of claude-bridge  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The view part of claude-bridge.el: the chat buffer.  It draws a
;; chat's model (claude-bridge-model.el) in batches, on a short timer,
;; never per token: the conversation above, read-only, then a header
;; line with the keys and the context chips of the next prompt, then
;; the prompt, which is ordinary editable text with its own undo and
;; history (M-p, M-n).
;;
;; The buffer's major mode is `markdown-mode' when it is installed,
;; else `text-mode' (see `claude-bridge-chat-major-mode'); the minor
;; mode `claude-bridge-chat-mode' adds the chat's keys.  Keys that only
;; make sense on something (TAB on a tool call, a, d... on a waiting
;; permission prompt, M-p in the prompt) are bound only there, through
;; keymap filters, so that everywhere else the major mode's keys work.
;;
;; Drawing never moves the user's point onto something new: text drawn
;; where a point is pushes it along, so that a permission prompt can
;; never be answered by keys that were meant for the prompt.  The undo
;; entries of the prompt are moved along with it as the conversation
;; grows above it.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'button)
(require 'project)
(require 'claude-bridge-client)
(require 'claude-bridge-model)
(require 'claude-bridge-permission)

(declare-function claude-bridge-restart "claude-bridge" (&optional chat))
(declare-function claude-bridge-set-model "claude-bridge-commands" (model &optional chat))
(declare-function claude-bridge-set-permission-mode "claude-bridge-commands"
                  (mode &optional chat))
(declare-function claude-bridge-menu "claude-bridge-commands" ())
(defvar claude-bridge-chat-mode-map)
(defvar claude-bridge-chat-mode)
(declare-function claude-bridge-send "claude-bridge-commands" (prompt &optional chat))
(declare-function claude-bridge-interrupt "claude-bridge-commands" (&optional chat))
(declare-function claude-bridge-resume "claude-bridge-commands"
                  (&optional claude-session-id directory))
(declare-function claude-bridge-sessions "claude-bridge-commands" ())
(declare-function claude-bridge-close "claude-bridge-commands" (&optional chat))
(declare-function claude-bridge-add-file "claude-bridge-commands" (file))
(declare-function claude-bridge-paste-image "claude-bridge-commands" ())
(declare-function claude-bridge-remove-context "claude-bridge-commands" (label))
(declare-function claude-bridge-answer-permission "claude-bridge-commands" ())

;;;; Options and faces

(defcustom claude-bridge-chat-major-mode nil
  "The major mode of chat buffers.
nil: `markdown-mode' when it is installed, else `text-mode'."
  :type '(choice (const :tag "markdown-mode if installed, else text-mode" nil) function)
  :group 'claude-bridge)

(defcustom claude-bridge-redraw-delay 0.05
  "Seconds between redraws of a streaming chat buffer."
  :type 'number
  :group 'claude-bridge)

(defgroup claude-bridge-faces nil
  "Faces of the claude-bridge chat buffer."
  :group 'claude-bridge)

(defface claude-bridge-user '((t :inherit font-lock-keyword-face :weight bold))
  "Face of the user's prompts."
  :group 'claude-bridge-faces)

(defface claude-bridge-section '((t :inherit font-lock-function-name-face))
  "Face of tool call and thinking headers."
  :group 'claude-bridge-faces)

(defface claude-bridge-dim '((t :inherit shadow))
  "Face of turn summaries, section bodies and quiet notices."
  :group 'claude-bridge-faces)

(defface claude-bridge-info '((t :inherit font-lock-doc-face))
  "Face of plain information: a model or mode switched, a session closed."
  :group 'claude-bridge-faces)

(defface claude-bridge-warning '((t :inherit warning))
  "Face of warnings: a retry, a limit, a process that exited."
  :group 'claude-bridge-faces)

(defface claude-bridge-error '((t :inherit error))
  "Face of errors: an API error, a failed turn."
  :group 'claude-bridge-faces)

(defface claude-bridge-permission '((t :inherit warning :weight bold))
  "Face of a permission prompt that waits for an answer."
  :group 'claude-bridge-faces)

(defface claude-bridge-mention '((t :inherit link))
  "Face of @-mentions in the prompt and of context chips."
  :group 'claude-bridge-faces)

;;;; Buffer state

(defvar-local claude-bridge--buffer-chat nil
  "The chat of this chat buffer.")
(put 'claude-bridge--buffer-chat 'permanent-local t)

(defvar-local claude-bridge-view--timer nil
  "The pending redraw timer of this chat buffer.")

(defvar-local claude-bridge-view--insert-marker nil
  "Where the next conversation item is drawn: the start of the header.")

(defvar-local claude-bridge-view--prompt-marker nil
  "Where the prompt begins: the end of the header.")

(defvar-local claude-bridge-view--header nil
  "(LABELS) of the context chips the header shows now, or nil before it is drawn.")

(defvar-local claude-bridge-view--history-index nil
  "Which prompt of the history the prompt shows (0: the newest), or nil.")

(defvar-local claude-bridge-view--draft nil
  "The prompt typed before the history took it over.")

(defvar claude-bridge-view--points nil
  "While drawing: (WINDOW-OR-NIL . POSITION) of the points to keep in place.")

(defun claude-bridge-view-chat-buffer (chat)
  "Return CHAT's chat buffer if it is live."
  (let ((buf (claude-bridge--chat-buffer chat)))
    (and (buffer-live-p buf) buf)))

(defun claude-bridge-view-visible-p (chat)
  "Return non-nil when CHAT's buffer is in a window of a visible frame."
  (when-let ((buf (claude-bridge-view-chat-buffer chat)))
    (cl-some (lambda (w) (frame-visible-p (window-frame w)))
             (get-buffer-window-list buf nil t))))

(defun claude-bridge-view-in-prompt-p (&optional pos)
  "Return non-nil when POS (default: point) is in the prompt of this chat."
  (and claude-bridge-view--prompt-marker
       (>= (or pos (point)) claude-bridge-view--prompt-marker)))

(defun claude-bridge-view-item-at (&optional pos)
  "Return the conversation item drawn at POS (default: point), or nil."
  (let ((pos (or pos (point))))
    (and (< pos (point-max))
         (get-text-property pos 'claude-bridge-item))))

;;;; Drawing primitives

(defun claude-bridge-view--shift-undo-entry (entry delta)
  "Return undo ENTRY with its buffer positions moved by DELTA."
  (pcase entry
    ((pred integerp) (+ entry delta))
    (`(,(and beg (pred integerp)) . ,(and end (pred integerp)))
     (cons (+ beg delta) (+ end delta)))
    (`(,(and text (pred stringp)) . ,(and pos (pred integerp)))
     (cons text (if (< pos 0) (- pos delta) (+ pos delta))))
    (`(nil ,prop ,val ,(and beg (pred integerp)) . ,(and end (pred integerp)))
     (cl-list* nil prop val (+ beg delta) (+ end delta)))
    (`(apply ,(and d (pred integerp)) ,(and beg (pred integerp)) ,(and end (pred integerp))
             . ,rest)
     (cl-list* 'apply d (+ beg delta) (+ end delta) rest))
    (_ entry)))

(defun claude-bridge-view--shift-undo (delta)
  "Move the prompt's undo entries by DELTA: the conversation above changed size."
  (unless (or (zerop delta) (eq buffer-undo-list t))
    (setq buffer-undo-list
          (mapcar (lambda (e) (claude-bridge-view--shift-undo-entry e delta))
                  buffer-undo-list))
    (when (and (consp pending-undo-list)
               (eq (window-buffer (selected-window)) (current-buffer)))
      (setq pending-undo-list
            (mapcar (lambda (e) (claude-bridge-view--shift-undo-entry e delta))
                    pending-undo-list)))))

(defun claude-bridge-view--moved (beg end delta)
  "Keep the tracked points in place after BEG..END changed size by DELTA."
  (dolist (p claude-bridge-view--points)
    (let ((pos (cdr p)))
      (setcdr p (cond ((< pos beg) pos)
                      ((>= pos end) (+ pos delta))
                      (t beg))))))

(defmacro claude-bridge-view--drawing (&rest body)
  "Run BODY, which draws the conversation; keep the points and the undo.
Points at or after a change are pushed along with the text after it;
the prompt's undo entries move with the prompt."
  (declare (indent 0) (debug t))
  `(let* ((inhibit-read-only t)
          (modified (buffer-modified-p))
          (prompt-before (marker-position claude-bridge-view--prompt-marker))
          (windows (cl-remove (selected-window)
                              (get-buffer-window-list (current-buffer) nil t)))
          (claude-bridge-view--points
           (cons (cons nil (point))
                 (mapcar (lambda (w) (cons w (window-point w))) windows))))
     (let ((buffer-undo-list t))
       ,@body)
     (dolist (p claude-bridge-view--points)
       (if (car p)
           (set-window-point (car p) (cdr p))
         (goto-char (cdr p))))
     (claude-bridge-view--shift-undo
      (- claude-bridge-view--prompt-marker prompt-before))
     (set-buffer-modified-p modified)))

(defun claude-bridge-view--insert-at (pos text)
  "Insert TEXT at POS, pushing the points there along."
  (goto-char pos)
  (insert text)
  (claude-bridge-view--moved pos pos (length text)))

(defun claude-bridge-view--replace (beg end text)
  "Replace BEG..END with TEXT; points inside go to BEG, points after move along."
  (let ((delta (- (length text) (- end beg))))
    (goto-char beg)
    (delete-region beg end)
    (insert text)
    (claude-bridge-view--moved beg end delta)))

(defun claude-bridge-view--propertize (text face)
  "Return TEXT with FACE, as `face' and as `font-lock-face' (for font-lock)."
  (propertize text 'face face 'font-lock-face face))

;;;; Buttons

(define-button-type 'claude-bridge-button
  'follow-link t
  'help-echo (lambda (_window object pos)
               (get-text-property pos 'claude-bridge-help object))
  'face 'button)

(defun claude-bridge-view--button (label action help &rest props)
  "Return LABEL as a button running ACTION (of the button), with HELP text.
PROPS are more text properties."
  ;; Given a string, `make-text-button' returns a copy that is the button.
  (let ((s (apply #'make-text-button (copy-sequence label) nil :type 'claude-bridge-button
                  'action action 'claude-bridge-help help props)))
    (unless (plist-get props 'font-lock-face)
      (add-text-properties 0 (length s) '(font-lock-face button) s))
    s))

;;;; Rendering

(defun claude-bridge-view--format-cost (usd)
  "Format USD as a cost."
  (format "$%.4f" (or usd 0)))

(defun claude-bridge-view--json (value)
  "VALUE as compact JSON text."
  (condition-case nil
      (json-serialize (or value claude-bridge-client-empty-object)
                      :null-object nil :false-object :json-false)
    (error (format "%S" value))))

(defun claude-bridge-view--indent (text &optional prefix)
  "TEXT with each line after PREFIX (default two spaces)."
  (replace-regexp-in-string "^" (or prefix "  ") text))

(defun claude-bridge-view--render-user (item props)
  "Render the user prompt ITEM with its PROPS."
  (concat
   (claude-bridge-view--propertize
    (concat "\n❯ " (claude-bridge-item-text item)) 'claude-bridge-user)
   (when-let ((labels (plist-get props :attachments)))
     (claude-bridge-view--propertize
      (concat "\n  + " (string-join labels ", ")) 'claude-bridge-dim))
   (when (plist-get props :queued)
     (claude-bridge-view--propertize "\n  (waiting for Claude to start)"
                                     'claude-bridge-dim))))

(defun claude-bridge-view--tool-file-button (item)
  "Return the file of tool ITEM as a button that visits it, or nil."
  (when-let ((file (claude-bridge-model-tool-file (claude-bridge-model-get item :input))))
    (claude-bridge-view--button
     (abbreviate-file-name file)
     (lambda (_) (claude-bridge-view-visit-tool item))
     (format "RET, mouse-1: visit %s" file))))

(defun claude-bridge-view--edit-body (name input)
  "The body of an expanded Edit, MultiEdit or Write call NAME with INPUT."
  (let ((diff (lambda (old new)
                (concat (claude-bridge-view--indent (or old "") "  - ") "\n"
                        (claude-bridge-view--indent (or new "") "  + ")))))
    (pcase name
      ("Write" (claude-bridge-view--indent (or (plist-get input :content) "") "  + "))
      ("Edit" (funcall diff (plist-get input :old_string) (plist-get input :new_string)))
      (_ (mapconcat (lambda (e) (funcall diff (plist-get e :old_string)
                                         (plist-get e :new_string)))
                    (append (plist-get input :edits) nil) "\n  …\n")))))

(defun claude-bridge-view--render-tool (item props)
  "Render the tool call ITEM with its PROPS."
  (let* ((result (plist-get props :result))
         (name (plist-get props :name))
         (input (plist-get props :input))
         (status (cond ((null result) " …") ((plist-get props :error) " ✗") (t " ✓")))
         (file (claude-bridge-model-tool-file input))
         (summary (claude-bridge-item-text item)))
    (concat
     (claude-bridge-view--propertize
      (if (claude-bridge-item-expanded item) "▾ " "▸ ") 'claude-bridge-section)
     (if file
         (concat (claude-bridge-view--propertize (format "%s: " name) 'claude-bridge-section)
                 (claude-bridge-view--tool-file-button item))
       (claude-bridge-view--propertize summary 'claude-bridge-section))
     (claude-bridge-view--propertize status 'claude-bridge-section)
     (when (claude-bridge-item-expanded item)
       (claude-bridge-view--propertize
        (concat "\n"
                (if (member name '("Edit" "MultiEdit" "Write"))
                    (claude-bridge-view--edit-body name input)
                  (concat "  input: " (claude-bridge-view--json input)))
                (if result
                    (concat "\n  result:\n" (claude-bridge-view--indent result "    "))
                  ""))
        'claude-bridge-dim)))))

(defun claude-bridge-view--render-todo (item props)
  "Render the TodoWrite checklist ITEM with its PROPS."
  (concat
   (claude-bridge-view--propertize
    (format "%s Plan" (if (claude-bridge-item-expanded item) "▸" "▾"))
    'claude-bridge-section)
   (unless (claude-bridge-item-expanded item) ; shown unless folded
     (mapconcat
      (lambda (todo)
        (let ((status (plist-get todo :status)))
          (claude-bridge-view--propertize
           (format "\n  %s %s"
                   (pcase status ("completed" "[x]") ("in_progress" "[>]") (_ "[ ]"))
                   (if (equal status "in_progress")
                       (or (plist-get todo :activeForm) (plist-get todo :content))
                     (plist-get todo :content)))
           (if (equal status "completed") 'claude-bridge-dim 'default))))
      (plist-get props :todos) ""))))

(defun claude-bridge-view--tokens (n)
  "N tokens, short: 950, 19.9k, 1M."
  (cond ((not (numberp n)) "?")
        ((< n 1000) (format "%d" n))
        ((< n 1000000) (replace-regexp-in-string "\\.0k\\'" "k" (format "%.1fk" (/ n 1000.0))))
        (t (replace-regexp-in-string "\\.0M\\'" "M" (format "%.1fM" (/ n 1000000.0))))))

(defun claude-bridge-view--render-result (props)
  "Render a turn summary with PROPS."
  (let ((context (plist-get props :context)))
    (claude-bridge-view--propertize
     (format "── %s%s · %s this turn · %s total%s ──"
             (if (plist-get props :interrupted) "interrupted · " "")
             (format "%.1f s" (/ (or (plist-get props :duration) 0) 1000.0))
             (claude-bridge-view--format-cost (plist-get props :cost))
             (claude-bridge-view--format-cost (plist-get props :total))
             (if context
                 (format " · context %s/%s tokens (%s%%)"
                         (claude-bridge-view--tokens (plist-get context :totalTokens))
                         (claude-bridge-view--tokens (plist-get context :maxTokens))
                         (plist-get context :percentage))
               ""))
     'claude-bridge-dim)))

(defun claude-bridge-view--render-notice (item props)
  "Render the notice ITEM with its PROPS."
  (let ((level (plist-get props :level)))
    (concat
     (claude-bridge-view--propertize
      (concat (pcase level ((or 'warning 'error) "⚠ ") (_ "· "))
              (claude-bridge-item-text item))
      (pcase level
        ('error 'claude-bridge-error)
        ('warning 'claude-bridge-warning)
        ('quiet 'claude-bridge-dim)
        (_ 'claude-bridge-info)))
     (when (plist-get props :restart)
       (concat "  "
               (claude-bridge-view--button
                "[Restart]" (lambda (_) (claude-bridge-restart claude-bridge--buffer-chat))
                "Start Claude again, continuing this conversation"))))))

(defun claude-bridge-view--choice-button (item choice)
  "Return the button of CHOICE (a plist) on the permission card ITEM."
  (claude-bridge-view--button
   (format "[%c] %s" (plist-get choice :key) (plist-get choice :label))
   (lambda (_) (claude-bridge-permission-choose claude-bridge--buffer-chat item choice))
   (plist-get choice :help)))

(defun claude-bridge-view--render-permission (item props)
  "Render the permission card ITEM with its PROPS."
  (let* ((request (plist-get props :request))
         (answer (plist-get props :answer))
         (chat claude-bridge--buffer-chat)
         (pending (and chat (claude-bridge-model-permission-pending-p chat item)))
         (body (claude-bridge-permission-body request item)))
    (concat
     (claude-bridge-view--propertize
      (concat (cond (pending "? ") ((plist-get props :withdrawn) "⊘ ")
                    ((plist-get props :allowed) "✓ ")
                    (t "✗ "))
              (claude-bridge-permission-title request)
              (if answer (format " — %s" answer) ""))
      (if pending 'claude-bridge-permission 'claude-bridge-dim))
     (when (and pending body (not (string-empty-p body)))
       (concat "\n" (claude-bridge-view--propertize (claude-bridge-view--indent body)
                                                    'default)))
     (when pending
       ;; The plain choices on one line, each rule on a line of its own.
       (let ((choices (claude-bridge-permission-choices request item)))
         (concat
          "\n  "
          (mapconcat (lambda (choice) (claude-bridge-view--choice-button item choice))
                     (cl-remove-if #'claude-bridge-view--rule-choice-p choices)
                     "  ")
          (mapconcat (lambda (choice)
                       (concat "\n  " (claude-bridge-view--choice-button item choice)))
                     (cl-remove-if-not #'claude-bridge-view--rule-choice-p choices)
                     "")))))))

(defun claude-bridge-view--rule-choice-p (choice)
  "Return non-nil when CHOICE is to apply a rule the CLI suggests."
  (consp (plist-get choice :do)))

(defun claude-bridge-view-render (item)
  "Return the text that draws ITEM (without its trailing newline)."
  (let ((props (claude-bridge-item-props item)))
    (pcase (claude-bridge-item-kind item)
      ('user (claude-bridge-view--render-user item props))
      ('text (claude-bridge-model-take-unseen item)
             (concat (claude-bridge-model-item-text item)
                     (if (plist-get props :aborted) " [interrupted]" "")))
      ('thinking
       (claude-bridge-model-take-unseen item)
       (concat (claude-bridge-view--propertize
                (format "%s Thinking" (if (claude-bridge-item-expanded item) "▾" "▸"))
                'claude-bridge-section)
               (if (claude-bridge-item-expanded item)
                   (claude-bridge-view--propertize
                    (concat "\n" (claude-bridge-model-item-text item)) 'claude-bridge-dim)
                 "")))
      ('tool (claude-bridge-view--render-tool item props))
      ('todo (claude-bridge-view--render-todo item props))
      ('result (claude-bridge-view--render-result props))
      ('permission (claude-bridge-view--render-permission item props))
      (_ (claude-bridge-view--render-notice item props)))))

(defun claude-bridge-view--item-properties (item)
  "The text properties of the drawn ITEM."
  (list 'read-only t 'front-sticky '(read-only) 'claude-bridge-item item))

(defun claude-bridge-view--draw (item)
  "Draw ITEM where it belongs: append, extend or redraw it."
  (let ((start (claude-bridge-item-start item))
        (end (claude-bridge-item-end item))
        (props (claude-bridge-item-props item)))
    (cond
     ((null start)
      (let ((beg (marker-position claude-bridge-view--insert-marker))
            (text (concat (claude-bridge-view-render item) "\n")))
        (add-text-properties 0 (length text) (claude-bridge-view--item-properties item) text)
        (claude-bridge-view--insert-at beg text)
        (setf (claude-bridge-item-start item) (copy-marker beg)
              (claude-bridge-item-end item) (copy-marker (+ beg (length text) -1) t))))
     ((and (eq (claude-bridge-item-kind item) 'text)
           (not (plist-get props :redraw))
           (not (plist-get props :aborted)))
      (when (claude-bridge-item-unseen item)
        (let ((beg (marker-position end)))
          ;; Newest chunk first, each at BEG: they end up in order, uncopied.
          (dolist (chunk (claude-bridge-model-mark-seen item))
            (goto-char beg)
            (insert chunk)
            (claude-bridge-view--moved beg beg (length chunk)))
          (add-text-properties beg end (claude-bridge-view--item-properties item)))))
     ((and (eq (claude-bridge-item-kind item) 'thinking)
           (not (claude-bridge-item-expanded item))
           (not (plist-get props :redraw)))
      (claude-bridge-model-take-unseen item))
     (t
      (claude-bridge-model-put item :redraw nil)
      (let ((text (claude-bridge-view-render item)))
        (add-text-properties 0 (length text) (claude-bridge-view--item-properties item) text)
        (claude-bridge-view--replace (marker-position start) (marker-position end) text)
        (set-marker end (+ start (length text))))))))

(defun claude-bridge-view--header-text (chat)
  "The header line of CHAT's prompt: its keys, then the next prompt's context."
  (concat
   (claude-bridge-view--propertize
    (substitute-command-keys
     (concat "── \\<claude-bridge-chat-mode-map>\\[claude-bridge-send] send · "
             "\\[claude-bridge-interrupt] interrupt · "
             "\\[claude-bridge-menu] menu · \\[claude-bridge-answer-permission] answer ──"))
    'claude-bridge-dim)
   (when-let ((attachments (claude-bridge--chat-attachments chat)))
     (concat "\n"
             (claude-bridge-view--propertize "Context: " 'claude-bridge-dim)
             (mapconcat
              (lambda (a)
                (let ((label (plist-get a :label)))
                  (claude-bridge-view--button
                   (format "[%s ×]" label)
                   (lambda (_) (claude-bridge-model-detach chat label))
                   (format "RET, mouse-1: remove %s from the next prompt" label)
                   'face 'claude-bridge-mention 'font-lock-face 'claude-bridge-mention
                   'claude-bridge-chip label)))
              attachments " ")))
   "\n"))

(defun claude-bridge-view--draw-header (chat)
  "Draw CHAT's header again when it changed."
  (let ((key (mapcar (lambda (a) (plist-get a :label))
                     (claude-bridge--chat-attachments chat))))
    (unless (and claude-bridge-view--header (equal key (car claude-bridge-view--header)))
      (setq claude-bridge-view--header (list key))
      (let ((text (claude-bridge-view--header-text chat))
            (beg (marker-position claude-bridge-view--insert-marker))
            (end (marker-position claude-bridge-view--prompt-marker)))
        ;; Read-only all through, but typing right after it is fine.
        (add-text-properties 0 (length text)
                             '(read-only t front-sticky (read-only)
                                         claude-bridge-header t)
                             text)
        (put-text-property (1- (length text)) (length text)
                           'rear-nonsticky '(read-only) text)
        (claude-bridge-view--replace beg end text)
        (set-marker claude-bridge-view--insert-marker beg)
        (set-marker claude-bridge-view--prompt-marker (+ beg (length text)))))))

(defun claude-bridge-view-flush (chat)
  "Draw every change of CHAT into its chat buffer now."
  (when-let ((buf (claude-bridge-view-chat-buffer chat)))
    (with-current-buffer buf
      (when (timerp claude-bridge-view--timer) (cancel-timer claude-bridge-view--timer))
      (setq claude-bridge-view--timer nil)
      (let ((dirty (nreverse (claude-bridge--chat-dirty chat))))
        (setf (claude-bridge--chat-dirty chat) nil)
        (claude-bridge-view--drawing
          (dolist (item dirty) (claude-bridge-view--draw item))
          (claude-bridge-view--draw-header chat)))
      (force-mode-line-update))
    (claude-bridge-view-update-indicator)))

(defun claude-bridge-view-schedule-redraw (chat)
  "Schedule one batched redraw of CHAT's chat buffer."
  (when-let ((buf (claude-bridge-view-chat-buffer chat)))
    (with-current-buffer buf
      (unless claude-bridge-view--timer
        (setq claude-bridge-view--timer
              (run-at-time claude-bridge-redraw-delay nil
                           #'claude-bridge-view-flush chat))))))

;;;; The buffer

(defun claude-bridge-view--major-mode ()
  "The major mode function of a new chat buffer."
  (or claude-bridge-chat-major-mode
      (if (require 'markdown-mode nil t) 'markdown-mode 'text-mode)))

(defun claude-bridge-view-make-buffer (chat name)
  "Return a new chat buffer called NAME for CHAT."
  (let ((buf (generate-new-buffer name)))
    (with-current-buffer buf
      (funcall (claude-bridge-view--major-mode))
      (setq default-directory (claude-bridge--chat-cwd chat))
      (setq claude-bridge--buffer-chat chat)
      (setf (claude-bridge--chat-buffer chat) buf
            (claude-bridge--chat-on-change chat) #'claude-bridge-view-schedule-redraw)
      (claude-bridge-chat-mode 1)
      (setq claude-bridge-view--insert-marker (copy-marker (point-min) t)
            claude-bridge-view--prompt-marker (copy-marker (point-min)))
      (claude-bridge-view--drawing (claude-bridge-view--draw-header chat))
      (goto-char (point-max))
      (set-buffer-modified-p nil))
    buf))

;;;; The prompt

(defun claude-bridge-view-input ()
  "Return the text of the prompt (trimmed)."
  (string-trim (buffer-substring-no-properties claude-bridge-view--prompt-marker
                                               (point-max))))

(defun claude-bridge-view-set-input (text)
  "Replace the prompt with TEXT."
  (let ((inhibit-read-only t))
    (delete-region claude-bridge-view--prompt-marker (point-max))
    (goto-char (point-max))
    (insert text)))

(defun claude-bridge-view-take-input ()
  "Return the text of the prompt and empty it; nil when it is empty.
Its undo starts afresh (\\[claude-bridge-previous-prompt] brings it back)."
  (when (and claude-bridge-view--prompt-marker claude-bridge-chat-mode)
    (let ((text (claude-bridge-view-input)))
      (unless (string-empty-p text)
        (let ((buffer-undo-list t))
          (claude-bridge-view-set-input ""))
        (setq buffer-undo-list nil
              claude-bridge-view--history-index nil
              claude-bridge-view--draft nil)
        (set-buffer-modified-p nil)
        text))))

(defun claude-bridge-previous-prompt (n)
  "Show the Nth previous prompt of this chat's history in the prompt."
  (interactive "p")
  (let* ((history (claude-bridge--chat-history claude-bridge--buffer-chat))
         (index (+ (or claude-bridge-view--history-index -1) n)))
    (cond
     ((null history) (user-error "No prompt sent yet in this chat"))
     ((< index 0)
      (setq claude-bridge-view--history-index nil)
      (claude-bridge-view-set-input (or claude-bridge-view--draft "")))
     ((>= index (length history)) (user-error "No earlier prompt"))
     (t
      (unless claude-bridge-view--history-index
        (setq claude-bridge-view--draft
              (buffer-substring-no-properties claude-bridge-view--prompt-marker (point-max))))
      (setq claude-bridge-view--history-index index)
      (claude-bridge-view-set-input (nth index history))))))

(defun claude-bridge-next-prompt (n)
  "Show the Nth next prompt of this chat's history (or the draft) in the prompt."
  (interactive "p")
  (unless claude-bridge-view--history-index (user-error "No later prompt"))
  (claude-bridge-previous-prompt (- n)))

(defun claude-bridge-goto-prompt ()
  "Go to the end of the prompt."
  (interactive)
  (goto-char (point-max)))

(defun claude-bridge-view-self-insert (n)
  "Insert the character typed N times at the end of the prompt.
Typing in the conversation, which is read-only, types into the prompt."
  (interactive "p")
  (goto-char (point-max))
  (self-insert-command n))

;;;; Completion of @-mentions and slash commands

(defun claude-bridge-view--project-names (root)
  "Return the files and folders of ROOT's project, relative to ROOT."
  (let* ((project (project-current nil root))
         (files (if project
                    (project-files project)
                  (directory-files root t directory-files-no-dot-files-regexp)))
         (names (make-hash-table :test #'equal)))
    (dolist (file files)
      (let ((rel (file-relative-name file root)))
        (unless (string-prefix-p "../" rel)
          (puthash (if (and (not project) (file-directory-p file)) (concat rel "/") rel)
                   t names)
          (let ((dir (file-name-directory rel)))
            (while dir
              (puthash dir t names)
              (setq dir (file-name-directory (directory-file-name dir))))))))
    (sort (hash-table-keys names) #'string<)))

(defun claude-bridge-view-completion-at-point ()
  "Complete an @-mention of a file or folder, or a slash command, in the prompt."
  (when (and claude-bridge--buffer-chat (claude-bridge-view-in-prompt-p))
    (let ((chat claude-bridge--buffer-chat)
          (end (point)))
      (cond
       ((claude-bridge-view--mention-start)
        (let ((start (claude-bridge-view--mention-start))
              (root (claude-bridge--chat-cwd chat))
              names)
          (list start end
                (lambda (string pred action)
                  (if (eq action 'metadata)
                      '(metadata (category . claude-bridge-mention))
                    (complete-with-action
                     action (or names (setq names (claude-bridge-view--project-names root)))
                     string pred)))
                :annotation-function
                (lambda (c) (if (string-suffix-p "/" c) "  folder" "  file")))))
       ((claude-bridge-view--command-start)
        (let ((start (claude-bridge-view--command-start))
              (commands (claude-bridge--chat-commands chat)))
          (list start end
                (mapcar (lambda (c) (plist-get c :name)) commands)
                :annotation-function
                (lambda (name)
                  (let ((c (cl-find name commands :key (lambda (c) (plist-get c :name))
                                    :test #'equal)))
                    (if c (concat "  " (or (plist-get c :description) "")) ""))))))))))

(defun claude-bridge-view--mention-start ()
  "Return where the @-mention that point ends begins (after the @), or nil."
  (save-excursion
    (when (re-search-backward "\\(?:^\\|[[:space:](]\\)@\\([^[:space:]]*\\)\\="
                              claude-bridge-view--prompt-marker t)
      (match-beginning 1))))

(defun claude-bridge-view--command-start ()
  "Return where the slash command before point begins (after the /), or nil.
Only a command at the start of the prompt counts."
  (save-excursion
    (when (and (re-search-backward "/\\([^[:space:]/]*\\)\\=" claude-bridge-view--prompt-marker t)
               (string-blank-p (buffer-substring-no-properties
                                claude-bridge-view--prompt-marker (point))))
      (match-beginning 1))))

(defun claude-bridge-view--mention-before-point-p ()
  "Return non-nil when point ends an @-mention or a slash command in the prompt."
  (and (claude-bridge-view-in-prompt-p)
       (or (claude-bridge-view--mention-start) (claude-bridge-view--command-start))))

;;;; Sections, files and next-error

(defun claude-bridge-view--foldable-at-point ()
  "Return the tool call, thinking or checklist at point, or nil."
  (let ((item (claude-bridge-view-item-at)))
    (and item (memq (claude-bridge-item-kind item) '(tool thinking todo)) item)))

(defun claude-bridge-toggle-section ()
  "Show or hide the body of the tool call, thinking or checklist at point."
  (interactive)
  (let ((item (or (claude-bridge-view--foldable-at-point)
                  (user-error "No tool call or thinking here"))))
    (setf (claude-bridge-item-expanded item) (not (claude-bridge-item-expanded item)))
    (claude-bridge-model-put item :redraw t)
    (claude-bridge-view--drawing (claude-bridge-view--draw item))))

(defun claude-bridge-view--tool-line (item)
  "Return the line of the file of tool ITEM that its call is about, or 1."
  (let* ((input (claude-bridge-model-get item :input))
         (file (claude-bridge-model-tool-file input))
         (name (claude-bridge-model-get item :name))
         (needle (pcase name
                   ("Edit" (or (plist-get input :new_string) (plist-get input :old_string)))
                   ("MultiEdit" (let ((e (car (append (plist-get input :edits) nil))))
                                  (or (plist-get e :new_string) (plist-get e :old_string)))))))
    (cond
     ((numberp (plist-get input :offset)) (max 1 (plist-get input :offset)))
     ((and needle (not (string-empty-p needle)) (file-readable-p file))
      (with-temp-buffer
        (insert-file-contents file)
        (if (search-forward needle nil t)
            (line-number-at-pos (match-beginning 0))
          1)))
     (t 1))))

(defun claude-bridge-view-visit-tool (item &optional other-window)
  "Visit the file of tool ITEM at the line its call is about.
In OTHER-WINDOW when non-nil, else in the window the chat is not in."
  (let ((file (claude-bridge-model-tool-file (claude-bridge-model-get item :input)))
        (line (claude-bridge-view--tool-line item)))
    (unless file (user-error "This tool call has no file"))
    (unless (file-exists-p file) (user-error "%s does not exist (yet)" file))
    (let ((buf (find-file-noselect file)))
      (if other-window
          (pop-to-buffer buf '(nil (inhibit-same-window . t)))
        (pop-to-buffer buf '((display-buffer-reuse-window display-buffer-pop-up-window)
                             (inhibit-same-window . t))))
      (goto-char (point-min))
      (forward-line (1- line)))))

(defun claude-bridge-view--file-tool-at-point ()
  "Return the tool call with a file at point, or nil."
  (let ((item (claude-bridge-view--foldable-at-point)))
    (and item (eq (claude-bridge-item-kind item) 'tool)
         (claude-bridge-model-tool-file (claude-bridge-model-get item :input))
         item)))

(defun claude-bridge-visit-tool-file ()
  "Visit the file of the tool call at point, at the line it is about."
  (interactive)
  (claude-bridge-view-visit-tool
   (or (claude-bridge-view--file-tool-at-point) (user-error "No file here"))))

(defun claude-bridge-view-next-error (n &optional reset)
  "Move to the Nth next tool call with a file and visit it (`next-error').
RESET starts from the first one."
  (let* ((chat claude-bridge--buffer-chat)
         (tools (cl-remove-if-not
                 (lambda (i) (and (eq (claude-bridge-item-kind i) 'tool)
                                  (claude-bridge-item-start i)
                                  (claude-bridge-model-tool-file
                                   (claude-bridge-model-get i :input))))
                 (claude-bridge-model-items chat)))
         (here (if reset (point-min) (point)))
         (current (cl-position-if (lambda (i) (<= (claude-bridge-item-start i) here
                                                  (claude-bridge-item-end i)))
                                  tools))
         (index (cond (reset (max 0 (1- n)))
                      (current (+ current n))
                      ((> n 0) (or (cl-position-if (lambda (i) (> (claude-bridge-item-start i)
                                                                  here))
                                                   tools)
                                   (length tools)))
                      (t (1- (or (cl-position-if (lambda (i) (> (claude-bridge-item-start i)
                                                               here))
                                                 tools)
                                 (length tools)))))))
    (unless (and tools (<= 0 index (1- (length tools))))
      (user-error "No %s tool call with a file" (if (< n 0) "earlier" "more")))
    (let ((item (nth index tools)))
      (goto-char (claude-bridge-item-start item))
      (when-let ((win (get-buffer-window (current-buffer))))
        (set-window-point win (point)))
      (claude-bridge-view-visit-tool item t))))

;;;; The mode line

(defun claude-bridge-view--mode-line-part (text help command)
  "Return TEXT for the mode line, with the tooltip HELP and a click for COMMAND."
  (propertize text 'help-echo help 'mouse-face 'mode-line-highlight
              'local-map (make-mode-line-mouse-map
                          'mouse-1 (lambda (event)
                                     (interactive "e")
                                     ;; In the chat whose mode line was clicked.
                                     (with-selected-window (posn-window (event-start event))
                                       (call-interactively command))))))

(defun claude-bridge-view-mode-line ()
  "The mode-line text of this chat: model, permission mode, state and cost."
  (when-let ((chat claude-bridge--buffer-chat))
    (let ((waiting (length (claude-bridge--chat-permissions chat))))
      (concat
       " ["
       (claude-bridge-view--mode-line-part
        (or (claude-bridge--chat-model chat) "default")
        "The model: mouse-1 switches it" #'claude-bridge-set-model)
       "|"
       (claude-bridge-view--mode-line-part
        (or (claude-bridge--chat-permission-mode chat) "default")
        "The permission mode: mouse-1 switches it" #'claude-bridge-set-permission-mode)
       "|"
       (claude-bridge-view--mode-line-part
        (symbol-name (claude-bridge--chat-state chat))
        "The chat's state: mouse-1 opens the Claude menu" #'claude-bridge-menu)
       "|"
       (claude-bridge-view--format-cost (claude-bridge-model-total-cost chat))
       (if (> waiting 0)
           (claude-bridge-view--mode-line-part
            (propertize (format "|%d asks" waiting) 'face 'claude-bridge-permission)
            "Permission prompts wait: mouse-1 goes to the first"
            #'claude-bridge-answer-permission)
         "")
       "]"))))

(defvar claude-bridge-view--all-chats-function #'ignore
  "Function returning every chat of this Emacs (set by claude-bridge.el).")

(defun claude-bridge-view-waiting-text ()
  "Return the mode-line note of what waits for a permission answer."
  (let ((n (apply #'+ (mapcar (lambda (c) (length (claude-bridge--chat-permissions c)))
                              (funcall claude-bridge-view--all-chats-function)))))
    ;; A chat's own mode line counts its prompts already.
    (if (and (> n 0) (not (and claude-bridge--buffer-chat
                               (claude-bridge--chat-permissions claude-bridge--buffer-chat))))
        (claude-bridge-view--mode-line-part
         (propertize (format " Claude asks (%d)" n) 'face 'claude-bridge-permission)
         "Claude waits for a permission answer: mouse-1 goes to it"
         #'claude-bridge-answer-permission)
      "")))

(defconst claude-bridge-view--indicator '(:eval (claude-bridge-view-waiting-text))
  "The element of `global-mode-string' that shows waiting prompts.")

(defun claude-bridge-view-update-indicator ()
  "Say in every mode line whether a permission prompt waits, or stop saying it."
  (let ((waiting (cl-some #'claude-bridge--chat-permissions
                          (funcall claude-bridge-view--all-chats-function))))
    (if waiting
        (unless (member claude-bridge-view--indicator global-mode-string)
          (setq global-mode-string
                (append (if (listp global-mode-string) global-mode-string
                          (list global-mode-string))
                        (list claude-bridge-view--indicator))))
      (when (and (listp global-mode-string)
                 (member claude-bridge-view--indicator global-mode-string))
        (setq global-mode-string (remove claude-bridge-view--indicator
                                         global-mode-string))))
    (force-mode-line-update t)))

;;;; The minor mode

(defun claude-bridge-view--when (pred command)
  "Return a key binding to COMMAND where PRED is non-nil, and nowhere else.
Elsewhere the key does what the major mode or the global map says."
  `(menu-item "" ,command :filter ,(lambda (cmd) (and (funcall pred) cmd))))

(defvar claude-bridge-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'claude-bridge-send)
    (define-key map (kbd "C-c C-k") #'claude-bridge-interrupt)
    (define-key map (kbd "C-c C-p") #'claude-bridge-answer-permission)
    (define-key map (kbd "C-c C-m") #'claude-bridge-set-model)
    (define-key map (kbd "C-c C-o") #'claude-bridge-set-permission-mode)
    (define-key map (kbd "C-c C-r") #'claude-bridge-resume)
    (define-key map (kbd "C-c C-l") #'claude-bridge-sessions)
    (define-key map (kbd "C-c C-q") #'claude-bridge-close)
    (define-key map (kbd "C-c C-t") #'claude-bridge-menu)
    (define-key map (kbd "C-c C-a") #'claude-bridge-add-file)
    (define-key map (kbd "C-c C-i") #'claude-bridge-paste-image)
    (define-key map (kbd "C-c C-d") #'claude-bridge-remove-context)
    (define-key map (kbd "C-c C-n") #'claude-bridge-goto-prompt)
    (define-key map (kbd "TAB")
                `(menu-item "" nil
                            :filter ,(lambda (_)
                                       (cond ((claude-bridge-view--foldable-at-point)
                                              #'claude-bridge-toggle-section)
                                             ((claude-bridge-view--mention-before-point-p)
                                              #'completion-at-point)))))
    (define-key map (kbd "RET")
                `(menu-item "" nil
                            :filter ,(lambda (_)
                                       (cond ((claude-bridge-permission-card-at-point)
                                              #'claude-bridge-permission-choose-key)
                                             ((and (not (button-at (point)))
                                                   (claude-bridge-view--file-tool-at-point))
                                              #'claude-bridge-visit-tool-file)))))
    (define-key map [remap self-insert-command]
                (claude-bridge-view--when (lambda () (not (claude-bridge-view-in-prompt-p)))
                                          #'claude-bridge-view-self-insert))
    (define-key map (kbd "M-p") (claude-bridge-view--when #'claude-bridge-view-in-prompt-p
                                                          #'claude-bridge-previous-prompt))
    (define-key map (kbd "M-n") (claude-bridge-view--when #'claude-bridge-view-in-prompt-p
                                                          #'claude-bridge-next-prompt))
    ;; A permission prompt's keys, only while point is on it.
    (dolist (key (append '("a" "d" "v" "e" "A") (mapcar #'number-to-string
                                                        (number-sequence 1 9))))
      (define-key map (kbd key)
                  `(menu-item "" nil
                              :filter ,(lambda (_)
                                         (and (claude-bridge-permission-card-at-point)
                                              (claude-bridge-permission-choice-for-key
                                               (string-to-char key))
                                              #'claude-bridge-permission-choose-key)))))
    map)
  "Keymap of `claude-bridge-chat-mode'.
On a waiting permission prompt its keys answer it: a allow, d deny,
1-9 the rules the CLI suggests, v show an edit's change, e allow with
your edits, RET pick one.")

(defun claude-bridge-view--kill-buffer ()
  "Close the chat of the buffer being killed, and stop drawing it."
  (when (timerp claude-bridge-view--timer) (cancel-timer claude-bridge-view--timer))
  (run-hook-with-args 'claude-bridge-view-kill-functions claude-bridge--buffer-chat))

(defvar claude-bridge-view-kill-functions nil
  "Functions called with the chat whose buffer is being killed.")

(defvar claude-bridge-view-kill-query-function (lambda (_chat) t)
  "Function of (CHAT) that returns nil to keep its buffer from being killed.")

(defun claude-bridge-view--kill-query ()
  "Ask before killing a chat buffer with a turn in progress.
See `kill-buffer-query-functions'."
  (or (null claude-bridge--buffer-chat)
      (funcall claude-bridge-view-kill-query-function claude-bridge--buffer-chat)))

(defconst claude-bridge-view--own-properties '(rear-nonsticky keymap help-echo mouse-face)
  "Text properties of the chat that font-lock must leave alone.")

(defun claude-bridge-view--font-lock-keep-properties ()
  "Keep font-lock (markdown-mode's) from removing the chat's text properties.
The chat's buttons, their tooltips and the header's stickiness stay,
whether font-lock is on already or starts later."
  (when (consp font-lock-defaults)
    (setq-local font-lock-defaults
                (append (cl-subseq font-lock-defaults 0 (min 5 (length font-lock-defaults)))
                        (mapcar (lambda (entry)
                                  (if (eq (car-safe entry) 'font-lock-extra-managed-props)
                                      (cons (car entry)
                                            (cl-set-difference
                                             (cdr entry) claude-bridge-view--own-properties))
                                    entry))
                                (nthcdr 5 font-lock-defaults)))))
  (setq-local font-lock-extra-managed-props
              (cl-set-difference font-lock-extra-managed-props
                                 claude-bridge-view--own-properties)))

(define-minor-mode claude-bridge-chat-mode
  "Minor mode of a Claude chat buffer.
Type after the line at the bottom; \\[claude-bridge-send] sends.
\\[claude-bridge-menu] shows everything a chat can do.
\\{claude-bridge-chat-mode-map}"
  :lighter " Claude"
  :keymap claude-bridge-chat-mode-map
  (if claude-bridge-chat-mode
      (progn
        (setq-local mode-line-process '(:eval (claude-bridge-view-mode-line)))
        (setq-local truncate-lines nil)
        (setq-local word-wrap t)
        ;; Long replies redisplay much faster without bidirectional reordering.
        (setq-local bidi-paragraph-direction 'left-to-right)
        (setq-local bidi-inhibit-bpa t)
        (setq-local next-error-function #'claude-bridge-view-next-error)
        (claude-bridge-view--font-lock-keep-properties)
        (font-lock-add-keywords
         nil '(("\\(?:^\\|[[:space:](]\\)\\(@[^[:space:]]+\\)" 1 'claude-bridge-mention t)))
        (add-hook 'completion-at-point-functions
                  #'claude-bridge-view-completion-at-point nil t)
        (add-hook 'kill-buffer-hook #'claude-bridge-view--kill-buffer nil t)
        (add-hook 'kill-buffer-query-functions #'claude-bridge-view--kill-query nil t))
    (kill-local-variable 'mode-line-process)
    (remove-hook 'completion-at-point-functions #'claude-bridge-view-completion-at-point t)))

(provide 'claude-bridge-view)
;;; claude-bridge-view.el ends here
