;;; claude-bridge.el --- Chat with Claude Code through claude-bridge  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes, convenience

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Hold long conversations with Claude Code in Emacs.  Each chat buffer
;; is one warm `claude' process, served by the `claude-bridge' JSON-RPC
;; bridge (one bridge per Emacs, started on first use):
;;
;; - `claude-bridge-chat' opens the chat of the current project; type
;;   after the prompt line and press C-c C-c.  The reply streams in
;;   without freezing Emacs; thinking and tool calls are collapsible
;;   sections (TAB shows the input and result); each turn ends with
;;   its cost and the context window's use.
;; - Sending while Claude works adds the message to the running turn;
;;   C-c C-k interrupts the turn and keeps the process.
;; - Permission prompts never block Emacs: edits show a diff of the
;;   file first; AskUserQuestion asks with `completing-read'; a prompt
;;   left open is answered later with C-c C-p.
;; - `claude-bridge-resume' continues an earlier conversation,
;;   `claude-bridge-send-region' sends the region as context,
;;   `claude-bridge-set-model' and `claude-bridge-set-permission-mode'
;;   switch mid-session, `claude-bridge-sessions' lists the sessions.
;;
;; The code has three parts: claude-bridge-client.el (the JSON-RPC
;; connection), claude-bridge-model.el (each session's conversation as
;; data) and this file (the chat buffer, drawn in batches, and the
;; commands).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'diff)
(require 'tabulated-list)
(require 'project)
(require 'claude-bridge-client)
(require 'claude-bridge-model)

(require 'markdown-mode nil t)
(declare-function ediff-buffers "ediff" (buffer-a buffer-b &optional startup-hooks job-name))

;;;; Options

(defcustom claude-bridge-model nil
  "Model of new sessions (an alias such as \"opus\" or an id); nil: the CLI's."
  :type '(choice (const :tag "The CLI's default" nil) string)
  :group 'claude-bridge)

(defcustom claude-bridge-permission-mode nil
  "Permission mode of new sessions; nil: the CLI's default."
  :type '(choice (const :tag "The CLI's default" nil)
                 (const "default") (const "acceptEdits") (const "plan")
                 (const "bypassPermissions") (const "dontAsk") (const "auto"))
  :group 'claude-bridge)

(defcustom claude-bridge-create-params nil
  "More `session/create' params for new sessions, as a plist.
For example (:appendSystemPrompt \"Be terse.\" :effort \"high\")."
  :type 'plist
  :group 'claude-bridge)

(defcustom claude-bridge-redraw-delay 0.05
  "Seconds between redraws of a streaming chat buffer."
  :type 'number
  :group 'claude-bridge)

;; A streaming turn conses a few kilobytes per event (jsonrpc.el's
;; parse, a temporary buffer per message); with the default threshold
;; Emacs collects garbage a dozen times a second during a fast stream,
;; and one collection is the longest pause the user feels.
(defcustom claude-bridge-streaming-gc-cons-threshold (* 64 1024 1024)
  "The `gc-cons-threshold' while a turn streams; nil leaves it alone.
When larger than the current threshold, it applies from the start of
a turn until no turn of any chat runs, then the previous value comes
back (unless something else changed it in between).  The garbage of
the stream is then collected once, after the turn."
  :type '(choice (const :tag "Leave gc-cons-threshold alone" nil) integer)
  :group 'claude-bridge)

(defcustom claude-bridge-turn-done-hook nil
  "Hook run when a turn ends, with the session and the turn result.
The result is the `session/send' result plist (:text, :costUsd,
:interrupted...)."
  :type 'hook
  :group 'claude-bridge)

(defcustom claude-bridge-permission-functions nil
  "Functions that may answer a permission request before Emacs asks.
Each is called with the session and the request plist (:toolName,
:input, :suggestions...) and returns a decision plist such as
\(:behavior \"allow\") or (:behavior \"deny\" :message \"no\"), or nil
to leave the request to the next function and finally to the user."
  :type 'hook
  :group 'claude-bridge)

(defconst claude-bridge-permission-modes
  '("default" "acceptEdits" "plan" "bypassPermissions" "dontAsk" "auto")
  "The permission modes the CLI accepts.")

(defgroup claude-bridge-faces nil
  "Faces of the claude-bridge chat buffer."
  :group 'claude-bridge)

(defface claude-bridge-user-face '((t :inherit font-lock-keyword-face :weight bold))
  "Face of the user's prompts."
  :group 'claude-bridge-faces)

(defface claude-bridge-section-face '((t :inherit font-lock-function-name-face))
  "Face of tool call and thinking headers."
  :group 'claude-bridge-faces)

(defface claude-bridge-dim-face '((t :inherit shadow))
  "Face of turn summaries and section bodies."
  :group 'claude-bridge-faces)

(defface claude-bridge-notice-face '((t :inherit warning))
  "Face of notices: errors, interrupts, exits."
  :group 'claude-bridge-faces)

;;;; Sessions

(defvar claude-bridge--sessions (make-hash-table :test #'equal)
  "Sessions of this Emacs by bridge session id.")

(defvar claude-bridge--early-events (make-hash-table :test #'equal)
  "Events of sessions whose `session/create' answer has not come yet.")

(defvar claude-bridge--prompts nil
  "Permission prompts waiting to be shown: (SESSION . REQUEST), oldest first.")

(defvar-local claude-bridge--session nil
  "The session of this chat buffer.")

(defvar-local claude-bridge--queued nil
  "Prompts waiting for the session of this buffer to start, oldest first.
Each is (PROMPT . ITEM), ITEM being the prompt's place in the chat.")

(defvar-local claude-bridge--timer nil
  "The pending redraw timer of this chat buffer.")

(defvar-local claude-bridge--insert-marker nil
  "Where the next conversation item is drawn.")

(defvar-local claude-bridge--prompt-marker nil
  "Where the prompt area begins.")

(defun claude-bridge--project-root (&optional directory)
  "Return the project root of DIRECTORY (default: `default-directory')."
  (let* ((dir (expand-file-name (or directory default-directory)))
         (project (project-current nil dir)))
    (file-name-as-directory
     (expand-file-name (if project (project-root project) dir)))))

(defun claude-bridge--live-p (session)
  "Return non-nil when SESSION's process is usable."
  (and session (memq (claude-bridge-session-state session) '(starting idle running))))

(defun claude-bridge--chat-buffers ()
  "Return the live chat buffers."
  (cl-remove-if-not (lambda (b) (buffer-local-value 'claude-bridge--session b))
                    (buffer-list)))

(defun claude-bridge--find-buffer (root)
  "Return the chat buffer of ROOT (one with a live session first), or nil."
  (let ((mine (cl-remove-if-not
               (lambda (b) (equal (claude-bridge-session-cwd
                                   (buffer-local-value 'claude-bridge--session b))
                                  root))
               (claude-bridge--chat-buffers))))
    (or (cl-find-if (lambda (b) (claude-bridge--live-p
                                 (buffer-local-value 'claude-bridge--session b)))
                    mine)
        (car mine))))

(defun claude-bridge--current-session (&optional noerror)
  "Return the session of this chat buffer or of the current project.
Signal an error if there is none, unless NOERROR."
  (or claude-bridge--session
      (when-let ((buf (claude-bridge--find-buffer (claude-bridge--project-root))))
        (buffer-local-value 'claude-bridge--session buf))
      (unless noerror
        (user-error "No Claude chat here: M-x claude-bridge-chat starts one"))))

(defun claude-bridge--session-buffer (session)
  "Return SESSION's chat buffer if it is live."
  (let ((buf (claude-bridge-session-buffer session)))
    (and (buffer-live-p buf) buf)))

;;;; Client wiring

(defun claude-bridge--on-notification (method params)
  "Handle the bridge's notification METHOD with PARAMS."
  (pcase method
    ('session/event
     (let* ((id (plist-get params :sessionId))
            (session (gethash id claude-bridge--sessions)))
       (if session
           (claude-bridge-model-apply session (plist-get params :event)
                                      (eq (plist-get params :replay) t))
         (push params (gethash id claude-bridge--early-events)))))
    ('session/exited
     (when-let ((session (gethash (plist-get params :sessionId) claude-bridge--sessions)))
       (remhash (plist-get params :sessionId) claude-bridge--sessions)
       (cond
        ((eq (claude-bridge-session-state session) 'closed))
        ((equal (plist-get params :reason) "closed")
         (setf (claude-bridge-session-state session) 'closed)
         (claude-bridge-model-add session 'notice "Session closed."))
        (t
         (let* ((status (plist-get params :status))
                (tail (string-trim (or (plist-get status :stderrTail) ""))))
           (claude-bridge-model-exited
            session
            (format "Claude exited (%s%s)%s; the next prompt starts a new session."
                    (plist-get params :reason)
                    (if (plist-get params :error)
                        (format ": %s" (plist-get params :error)) "")
                    (if (string-empty-p tail) "" (format "\n%s" tail)))))))
       (claude-bridge--streaming-ended)))
    ('window/logMessage
     (when (eql (plist-get params :type) 1)
       (message "claude-bridge: %s" (plist-get params :message))))
    (_ nil)))

(defun claude-bridge--on-request (method params)
  "Answer the bridge's request METHOD with PARAMS."
  (pcase method
    ('session/requestPermission
     (let ((session (gethash (plist-get params :sessionId) claude-bridge--sessions)))
       (cond
        ((null session)
         (list :behavior "deny" :message "No such session in Emacs."))
        ((run-hook-with-args-until-success 'claude-bridge-permission-functions
                                           session params))
        (t
         (claude-bridge-model-add-permission session params)
         (claude-bridge--queue-prompt session params)
         (list :behavior "defer")))))
    (_ (jsonrpc-error :code -32601 :message (format "%s is not handled" method)))))

(defun claude-bridge--on-bridge-exit (msg)
  "Report that the bridge ended with MSG in every chat buffer."
  (let (reported)
    (maphash (lambda (_id session)
               (when (claude-bridge--live-p session)
                 (setq reported t)
                 (claude-bridge-model-exited
                  session (format "%s; the next prompt starts a new one." msg))))
             claude-bridge--sessions)
    (clrhash claude-bridge--sessions)
    (clrhash claude-bridge--early-events)
    (setq claude-bridge--prompts nil)
    (dolist (buf (claude-bridge--chat-buffers))
      (let ((session (buffer-local-value 'claude-bridge--session buf)))
        (when (eq (claude-bridge-session-state session) 'starting)
          (setq reported t)
          (claude-bridge-model-exited session msg))))
    (claude-bridge--streaming-ended)
    (when reported
      (message "%s" msg))))

(setq claude-bridge-client-notification-function #'claude-bridge--on-notification
      claude-bridge-client-request-function #'claude-bridge--on-request
      claude-bridge-client-exit-function #'claude-bridge--on-bridge-exit)

;;;; Starting sessions

(defun claude-bridge--create (session &optional resume replay)
  "Start SESSION's CLI process; RESUME a CLI session id, with REPLAY."
  (setf (claude-bridge-session-state session) 'starting)
  (claude-bridge-client-call
   "session/create"
   (append (list :cwd (directory-file-name (claude-bridge-session-cwd session)))
           (when claude-bridge-model (list :model claude-bridge-model))
           (when claude-bridge-permission-mode
             (list :permissionMode claude-bridge-permission-mode))
           (when resume (list :resume resume))
           (when replay (list :replay t))
           claude-bridge-create-params)
   :on-result
   (lambda (result)
     (let ((id (plist-get result :sessionId)))
       (if (not (eq (claude-bridge-session-state session) 'starting))
           ;; The buffer was killed or closed meanwhile.
           (claude-bridge-client-call "session/close" (list :sessionId id))
         (setf (claude-bridge-session-id session) id
               (claude-bridge-session-pid session) (plist-get result :pid)
               (claude-bridge-session-model session) (plist-get result :model)
               (claude-bridge-session-models session)
               (append (plist-get result :models) nil)
               (claude-bridge-session-permission-mode session)
               (plist-get result :permissionMode)
               (claude-bridge-session-state session) 'idle)
         (puthash id session claude-bridge--sessions)
         (dolist (params (nreverse (gethash id claude-bridge--early-events)))
           (claude-bridge-model-apply session (plist-get params :event)
                                      (eq (plist-get params :replay) t)))
         (remhash id claude-bridge--early-events)
         (claude-bridge-model--changed session)
         (when-let ((buf (claude-bridge--session-buffer session)))
           (let ((queued (buffer-local-value 'claude-bridge--queued buf)))
             (with-current-buffer buf (setq claude-bridge--queued nil))
             (dolist (entry queued)
               (claude-bridge-model-put (cdr entry) :queued nil)
               (claude-bridge-model-put (cdr entry) :redraw t)
               (claude-bridge--send-now session (car entry) (cdr entry))))))))
   :on-error
   (lambda (err)
     (cond
      ((not (eq (claude-bridge-session-state session) 'starting)) nil)
      ((and resume (not replay) (not (eql (plist-get err :code) -1)))
         ;; A conversation continued after a crash: start afresh instead.
       (claude-bridge--create session))
      (t
       (when-let ((buf (claude-bridge--session-buffer session)))
         (with-current-buffer buf (setq claude-bridge--queued nil)))
       (claude-bridge-model-exited
        session (format "Could not start Claude: %s"
                        (claude-bridge-client-error-message err))))))))

(defun claude-bridge--setup-buffer (root)
  "Return a new chat buffer for ROOT."
  (let ((buf (generate-new-buffer
              (format "*claude: %s*"
                      (file-name-nondirectory (directory-file-name root))))))
    (with-current-buffer buf
      (claude-bridge-chat-mode)
      (setq default-directory root)
      (let ((session (claude-bridge-model-make-session root)))
        (setf (claude-bridge-session-buffer session) buf
              (claude-bridge-session-on-change session) #'claude-bridge--schedule-redraw)
        (setq claude-bridge--session session)))
    buf))

;;;###autoload
(defun claude-bridge-chat (&optional directory)
  "Open or show the Claude chat of the current project and return its buffer.
The project is the `project.el' root of DIRECTORY (default:
`default-directory'), else DIRECTORY itself."
  (interactive)
  (let* ((root (claude-bridge--project-root directory))
         (buf (or (claude-bridge--find-buffer root) (claude-bridge--setup-buffer root)))
         (session (buffer-local-value 'claude-bridge--session buf)))
    (when (eq (claude-bridge-session-state session) 'new)
      (claude-bridge--create session))
    (if (called-interactively-p 'any)
        (pop-to-buffer buf)
      (display-buffer buf))
    (with-current-buffer buf
      (when (< (point) claude-bridge--prompt-marker) (goto-char (point-max))))
    buf))

;;;; Turns

(defvar claude-bridge--saved-gc-cons-threshold nil
  "The `gc-cons-threshold' to restore when no turn streams, or nil.")

(defun claude-bridge--streaming-started ()
  "Raise `gc-cons-threshold' for a streaming turn, see the option of that name."
  (when (and claude-bridge-streaming-gc-cons-threshold
             (null claude-bridge--saved-gc-cons-threshold)
             (< gc-cons-threshold claude-bridge-streaming-gc-cons-threshold))
    (setq claude-bridge--saved-gc-cons-threshold gc-cons-threshold
          gc-cons-threshold claude-bridge-streaming-gc-cons-threshold)))

(defun claude-bridge--streaming-ended ()
  "Restore `gc-cons-threshold' when no turn of any session is running."
  (when (and claude-bridge--saved-gc-cons-threshold
             (not (cl-some (lambda (buf)
                             (eq (claude-bridge-session-state
                                  (buffer-local-value 'claude-bridge--session buf))
                                 'running))
                           (claude-bridge--chat-buffers))))
    (when (eql gc-cons-threshold claude-bridge-streaming-gc-cons-threshold)
      (setq gc-cons-threshold claude-bridge--saved-gc-cons-threshold))
    (setq claude-bridge--saved-gc-cons-threshold nil)))

(defun claude-bridge--turn-done (session result)
  "Record the end of SESSION's turn with RESULT and run the hooks."
  (let ((item (claude-bridge-model-turn-ended session result)))
    (claude-bridge--flush session)
    (claude-bridge--streaming-ended)
    (when (claude-bridge--live-p session)
      (claude-bridge-client-call
       "session/getContextUsage" (list :sessionId (claude-bridge-session-id session))
       :on-result (lambda (r)
                    (claude-bridge-model-set-context session item (plist-get r :usage)))
       :on-error #'ignore))
    (run-hook-with-args 'claude-bridge-turn-done-hook session result)))

(defun claude-bridge--send-now (session prompt &optional item)
  "Send PROMPT to SESSION: a new turn, or a live message into the running one.
ITEM is the prompt's item in the chat, when it is there already."
  (let ((id (claude-bridge-session-id session)))
    (if (eq (claude-bridge-session-state session) 'running)
        (progn
          (claude-bridge-model-turn-started session prompt item)
          (claude-bridge-client-call
           "session/message" (list :sessionId id :prompt prompt)
           :on-error (lambda (err)
                       (claude-bridge-model-add
                        session 'notice
                        (format "Not sent: %s" (claude-bridge-client-error-message err))))))
      (claude-bridge-model-turn-started session prompt item)
      (claude-bridge--streaming-started)
      (claude-bridge-client-call
       "session/send" (list :sessionId id :prompt prompt)
       :on-result (lambda (result) (claude-bridge--turn-done session result))
       :on-error
       (lambda (err)
         (when (eq (claude-bridge-session-state session) 'running)
           (setf (claude-bridge-session-state session) 'idle))
         (claude-bridge--streaming-ended)
         (unless (eql (plist-get err :code) -1) ; the bridge died: reported already
           (claude-bridge-model-add
            session 'notice
            (format "Turn failed: %s" (claude-bridge-client-error-message err)))))))))

(defun claude-bridge--take-input ()
  "Return the text of the prompt area, and empty it; nil when it is empty."
  (when (and claude-bridge--prompt-marker (derived-mode-p 'claude-bridge-chat-mode))
    (let ((text (string-trim (buffer-substring-no-properties
                              claude-bridge--prompt-marker (point-max)))))
      (unless (string-empty-p text)
        (delete-region claude-bridge--prompt-marker (point-max))
        text))))

;;;###autoload
(defun claude-bridge-send (prompt &optional session)
  "Send PROMPT to Claude in SESSION (default: this chat or the project's).
Interactively, in a chat buffer, PROMPT is the text typed after the
prompt line; elsewhere it is read from the minibuffer.  While a turn
runs, PROMPT goes into that turn as a live message.  A session whose
process is gone is started again (continuing its conversation)."
  (interactive (list (or (claude-bridge--take-input)
                         (read-string "Ask Claude: "))))
  (when (string-empty-p (string-trim prompt))
    (user-error "Nothing to send"))
  (let* ((session (or session
                      (claude-bridge--current-session t)
                      (buffer-local-value 'claude-bridge--session (claude-bridge-chat))))
         (buf (claude-bridge--session-buffer session)))
    (pcase (claude-bridge-session-state session)
      ((or 'idle 'running) (claude-bridge--send-now session prompt))
      (state
       (pcase state
         ('new (claude-bridge--create session))
         ((or 'exited 'closed)
          (let ((resume (claude-bridge-session-claude-session-id session)))
            (setf (claude-bridge-session-id session) nil)
            (claude-bridge--create session resume))))
       (let ((item (claude-bridge-model-add session 'user prompt :queued t)))
         (when buf
           (with-current-buffer buf
             (setq claude-bridge--queued
                   (append claude-bridge--queued (list (cons prompt item)))))))))
    session))

(defun claude-bridge--region-context (start end)
  "Return the text from START to END with its file name and lines."
  (let* ((file (if buffer-file-name
                   (file-relative-name buffer-file-name (claude-bridge--project-root))
                 (buffer-name)))
         (first (line-number-at-pos start))
         (last (line-number-at-pos (if (and (> end start)
                                            (save-excursion (goto-char end) (bolp)))
                                       (1- end)
                                     end)))
         (lang (string-remove-suffix "-mode" (symbol-name major-mode))))
    (format "%s, lines %d-%d:\n```%s\n%s\n```"
            file first last lang
            (string-trim-right (buffer-substring-no-properties start end)))))

;;;###autoload
(defun claude-bridge-send-region (start end &optional question)
  "Send the region from START to END to Claude, with its file and lines.
QUESTION, if not empty, follows the region."
  (interactive "r\nsAbout the region (optional): ")
  (let ((context (claude-bridge--region-context start end))
        (session (or (claude-bridge--current-session t)
                     (buffer-local-value 'claude-bridge--session (claude-bridge-chat)))))
    (claude-bridge-send (if (and question (not (string-empty-p question)))
                            (concat context "\n\n" question)
                          context)
                        session)))

(defun claude-bridge-interrupt (&optional session)
  "Interrupt the running turn of SESSION; the Claude process stays."
  (interactive)
  (let ((session (or session (claude-bridge--current-session))))
    (when (claude-bridge--live-p session)
      (claude-bridge-client-call
       "session/interrupt" (list :sessionId (claude-bridge-session-id session))))))

(defun claude-bridge--completion-table (candidates annotations)
  "A completion table of CANDIDATES annotated from the alist ANNOTATIONS."
  (lambda (string pred action)
    (if (eq action 'metadata)
        `(metadata (annotation-function
                    . ,(lambda (c)
                         (let ((a (cdr (assoc c annotations))))
                           (if a (concat "  " a) "")))))
      (complete-with-action action candidates string pred))))

(defun claude-bridge-set-model (model &optional session)
  "Switch SESSION to MODEL (an alias or id; empty: the default) from the next turn."
  (interactive
   (let* ((session (claude-bridge--current-session))
          (models (claude-bridge-session-models session))
          (names (mapcar (lambda (m) (plist-get m :value)) models)))
     (list (completing-read
            "Model: "
            (claude-bridge--completion-table
             names (mapcar (lambda (m) (cons (plist-get m :value)
                                             (or (plist-get m :description)
                                                 (plist-get m :displayName))))
                           models)))
           session)))
  (let ((session (or session (claude-bridge--current-session)))
        (model (if (member model '("" "default")) nil model)))
    (claude-bridge-client-call
     "session/setModel" (list :sessionId (claude-bridge-session-id session) :model model)
     :on-result (lambda (r)
                  (setf (claude-bridge-session-model session) (or (plist-get r :model) "default"))
                  (claude-bridge-model-add session 'notice
                                           (format "Model: %s" (or model "default")))))))

(defun claude-bridge-set-permission-mode (mode &optional session)
  "Switch SESSION to permission MODE."
  (interactive (list (completing-read "Permission mode: " claude-bridge-permission-modes
                                      nil t)
                     (claude-bridge--current-session)))
  (let ((session (or session (claude-bridge--current-session))))
    (claude-bridge-client-call
     "session/setPermissionMode" (list :sessionId (claude-bridge-session-id session)
                                       :mode mode)
     :on-result (lambda (r)
                  (setf (claude-bridge-session-permission-mode session) (plist-get r :mode))
                  (claude-bridge-model-add session 'notice
                                           (format "Permission mode: %s" (plist-get r :mode)))))))

(defun claude-bridge-close (&optional session)
  "Close SESSION gracefully; its chat buffer stays (the next prompt reopens)."
  (interactive)
  (let ((session (or session (claude-bridge--current-session))))
    (when (claude-bridge--live-p session)
      (let ((id (claude-bridge-session-id session)))
        (setf (claude-bridge-session-state session) 'closed)
        (claude-bridge-model-add session 'notice "Session closed.")
        (when id
          (remhash id claude-bridge--sessions)
          (claude-bridge-client-call "session/close" (list :sessionId id)
                                     :on-error #'ignore))))))

;;;; Resume

(defun claude-bridge--history-label (entry)
  "A one-line label of history ENTRY."
  (let ((title (or (plist-get entry :customTitle) (plist-get entry :title)
                   (plist-get entry :summary) (plist-get entry :firstPrompt) "")))
    (format "%s  (%s, %s messages)"
            (truncate-string-to-width (car (split-string title "\n")) 60 nil nil "…")
            (format-time-string "%Y-%m-%d %H:%M"
                                (/ (plist-get entry :lastModified) 1000.0))
            (plist-get entry :messageCount))))

;;;###autoload
(defun claude-bridge-resume (&optional claude-session-id directory)
  "Continue an earlier conversation of the project of DIRECTORY.
Interactively pick it from the project's history; from Lisp, pass its
CLAUDE-SESSION-ID.  Its messages are shown again, then the chat goes on.
The resumed chat replaces the project's chat buffer, whose conversation
stays in the history.  Return the chat buffer."
  (interactive)
  (let* ((root (claude-bridge--project-root directory))
         (id (or claude-session-id
                 (let* ((result (claude-bridge-client-call-sync
                                 "session/history"
                                 (list :cwd (directory-file-name root) :limit 100)))
                        (entries (append (plist-get result :conversations) nil))
                        (labels (mapcar (lambda (e) (cons (claude-bridge--history-label e)
                                                          (plist-get e :claudeSessionId)))
                                        entries)))
                   (unless entries (user-error "No earlier conversation in %s" root))
                   (or (cdr (assoc (completing-read
                                    (format "Resume conversation (default %s): "
                                            (caar labels))
                                    labels nil t nil nil (caar labels))
                                   labels))
                       (user-error "No such conversation")))))
         (old (claude-bridge--find-buffer root)))
    (when old
      (with-current-buffer old
        (let ((session claude-bridge--session))
          ;; Closed before the resume, which the bridge refuses while a
          ;; session still holds the conversation.
          (when (and (claude-bridge--live-p session) (claude-bridge-session-id session))
            (claude-bridge-client-call-sync
             "session/close" (list :sessionId (claude-bridge-session-id session))))
          (claude-bridge-close session)))
      ;; The resumed chat replaces it (the old conversation stays in the history).
      (kill-buffer old))
    (let* ((buf (claude-bridge--setup-buffer root))
           (session (buffer-local-value 'claude-bridge--session buf)))
      (claude-bridge-model-add session 'notice (format "Resuming %s" id))
      (claude-bridge--create session id t)
      (when (called-interactively-p 'any) (pop-to-buffer buf))
      buf)))

;;;; Session list

(defun claude-bridge-sessions ()
  "List the bridge's sessions; RET in the list visits a chat buffer.
Return the `session/list' entries."
  (interactive)
  (let* ((sessions (append (plist-get (claude-bridge-client-call-sync "session/list" nil)
                                      :sessions)
                           nil))
         (buf (get-buffer-create "*claude-bridge sessions*")))
    (with-current-buffer buf
      (claude-bridge-sessions-mode)
      (setq tabulated-list-entries
            (mapcar (lambda (s)
                      (list (plist-get s :sessionId)
                            (vector (plist-get s :sessionId)
                                    (plist-get s :state)
                                    (or (plist-get s :model) "")
                                    (format "$%.4f" (or (plist-get s :totalCostUsd) 0))
                                    (plist-get s :cwd))))
                    sessions))
      (tabulated-list-print))
    (when (called-interactively-p 'any) (pop-to-buffer buf))
    sessions))

(defun claude-bridge-sessions-visit ()
  "Show the chat buffer of the session at point."
  (interactive)
  (let ((session (gethash (tabulated-list-get-id) claude-bridge--sessions)))
    (if (and session (claude-bridge--session-buffer session))
        (pop-to-buffer (claude-bridge-session-buffer session))
      (user-error "That session has no chat buffer in this Emacs"))))

(defvar claude-bridge-sessions-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'claude-bridge-sessions-visit)
    map)
  "Keymap of `claude-bridge-sessions-mode'.")

(define-derived-mode claude-bridge-sessions-mode tabulated-list-mode "Claude Sessions"
  "Major mode listing the bridge's sessions."
  (setq tabulated-list-format [("Session" 14 t) ("State" 8 t) ("Model" 18 t)
                               ("Cost" 9 t) ("Directory" 0 t)])
  (tabulated-list-init-header))

;;;; Permission prompts

(defvar claude-bridge--prompt-timer nil
  "The timer that shows the next permission prompt.")

(defun claude-bridge--queue-prompt (session request)
  "Ask about SESSION's permission REQUEST as soon as Emacs can."
  (setq claude-bridge--prompts (append claude-bridge--prompts (list (cons session request))))
  (claude-bridge--schedule-prompt 0))

(defun claude-bridge--schedule-prompt (delay)
  "Show the next permission prompt in DELAY seconds."
  (unless (timerp claude-bridge--prompt-timer)
    (setq claude-bridge--prompt-timer
          (run-at-time delay nil #'claude-bridge--next-prompt))))

(defun claude-bridge--pending-p (session request)
  "Return non-nil while SESSION's REQUEST waits for an answer."
  (cl-find (plist-get request :requestId) (claude-bridge-session-permissions session)
           :key (lambda (r) (plist-get r :requestId)) :test #'equal))

(defun claude-bridge--next-prompt ()
  "Show the next waiting permission prompt, unless the minibuffer is busy."
  (setq claude-bridge--prompt-timer nil)
  (if (or (active-minibuffer-window) (> (minibuffer-depth) 0))
      (claude-bridge--schedule-prompt 0.5)
    (when-let ((next (pop claude-bridge--prompts)))
      (when (claude-bridge--pending-p (car next) (cdr next))
        (claude-bridge--ask (car next) (cdr next)))
      (when claude-bridge--prompts (claude-bridge--schedule-prompt 0)))))

(defun claude-bridge--file-after (input tool)
  "Return the content of INPUT's file after TOOL (Edit, MultiEdit, Write) ran."
  (let ((file (plist-get input :file_path)))
    (if (equal tool "Write")
        (or (plist-get input :content) "")
      (with-temp-buffer
        (when (file-readable-p file) (insert-file-contents file))
        (dolist (edit (if (equal tool "MultiEdit")
                          (append (plist-get input :edits) nil)
                        (list input)))
          (let ((old (plist-get edit :old_string))
                (new (plist-get edit :new_string))
                (all (eq (plist-get edit :replace_all) t)))
            (goto-char (point-min))
            (when (and old (not (string-empty-p old)))
              (while (and (search-forward old nil t)
                          (progn (replace-match new t t) all))))))
        (buffer-string)))))

(defvar-local claude-bridge--diff-buffers nil
  "The before and after buffers of a diff buffer, for ediff.")

(defun claude-bridge-diff-buffer (tool input)
  "Return a `diff-mode' buffer: the file on disk, then after TOOL with INPUT."
  (let* ((file (plist-get input :file_path))
         (before (generate-new-buffer " *claude-bridge before*"))
         (after (generate-new-buffer " *claude-bridge after*"))
         (old-file (make-temp-file "claude-bridge-before"))
         (new-file (make-temp-file "claude-bridge-after"))
         (out (get-buffer-create "*claude-bridge diff*")))
    (unwind-protect
        (progn
          (with-current-buffer before
            (when (file-readable-p file) (insert-file-contents file))
            (write-region nil nil old-file nil 'silent))
          (with-current-buffer after
            (insert (claude-bridge--file-after input tool))
            (write-region nil nil new-file nil 'silent))
          (with-current-buffer out
            (let ((inhibit-read-only t))
              (dolist (b claude-bridge--diff-buffers)
                (when (buffer-live-p b) (kill-buffer b)))
              (erase-buffer)
              (call-process diff-command nil t nil "-u"
                            "--label" file "--label" (concat file " (proposed)")
                            old-file new-file))
            (diff-mode)
            (set-buffer-modified-p nil)
            (setq buffer-read-only t)
            (setq-local claude-bridge--diff-buffers (list before after)))
          out)
      (delete-file old-file)
      (delete-file new-file))))

(defun claude-bridge--ask-questions (request)
  "Ask REQUEST's AskUserQuestion questions; return the allow decision."
  (let* ((input (plist-get request :input))
         (answers (make-hash-table :test #'equal)))
    (dolist (q (append (plist-get input :questions) nil))
      (let* ((question (plist-get q :question))
             (options (mapcar (lambda (o) (plist-get o :label))
                              (append (plist-get q :options) nil)))
             (descriptions (mapcar (lambda (o) (cons (plist-get o :label)
                                                     (plist-get o :description)))
                                   (append (plist-get q :options) nil)))
             (table (claude-bridge--completion-table options descriptions))
             (prompt (format "%s " question)))
        (puthash question
                 (if (eq (plist-get q :multiSelect) t)
                     (string-join (completing-read-multiple prompt table) ", ")
                   (completing-read prompt table))
                 answers)))
    (list :behavior "allow" :updatedInput (append input (list :answers answers)))))

(defun claude-bridge--ask-tool (session request)
  "Ask whether SESSION's REQUEST may run its tool.
Return a decision, or nil to answer later."
  (let* ((tool (plist-get request :toolName))
         (input (plist-get request :input))
         (suggestions (plist-get request :suggestions))
         (diff (when (and (member tool '("Edit" "Write" "MultiEdit"))
                          (plist-get input :file_path))
                 (claude-bridge-diff-buffer tool input)))
         (window (when diff (display-buffer diff '(nil (inhibit-same-window . t)))))
         (why (plist-get request :decisionReason))
         (prompt (format "Claude (%s) wants %s%s"
                         (file-name-nondirectory
                          (directory-file-name (claude-bridge-session-cwd session)))
                         (claude-bridge-model-tool-summary
                          (or (plist-get request :displayName) tool) input)
                         (if why (format " (%s)" why) "")))
         (choices (append '((?a "allow" "Run it once")
                            (?d "deny" "Refuse, with an optional reason"))
                          (when (> (length suggestions) 0)
                            '((?A "Always" "Allow and add the rule the CLI suggests")))
                          (when diff '((?e "ediff" "Compare in ediff; answer later")))
                          '((?l "later" "Leave it open; C-c C-p answers it")))))
    (unwind-protect
        (pcase (car (read-multiple-choice prompt choices))
          (?a (list :behavior "allow"))
          (?A (list :behavior "allow" :updatedPermissions suggestions))
          (?d (let ((reason (string-trim (read-string "Reason (optional): "))))
                (list :behavior "deny"
                      :message (if (string-empty-p reason) "Denied by the user." reason))))
          (?e (with-current-buffer diff
                (apply #'ediff-buffers claude-bridge--diff-buffers))
              (setq window nil)
              nil)
          (_ nil))
      (when (window-live-p window)
        (quit-restore-window window 'bury)))))

(defun claude-bridge--ask (session request)
  "Ask the user about SESSION's permission REQUEST and send the answer."
  (claude-bridge--flush session)       ; show the tool call being asked about
  ;; Timers run with quitting inhibited: let C-g leave the prompt open.
  (condition-case nil
      (let* ((inhibit-quit nil)
             (decision (if (eq (plist-get request :requiresUserInteraction) t)
                          (claude-bridge--ask-questions request)
                        (claude-bridge--ask-tool session request))))
        (if decision
            (claude-bridge--respond session request decision)
          (message "Permission request left open: C-c C-p in the chat answers it")))
    (quit (message "Permission request left open: C-c C-p in the chat answers it"))))

(defun claude-bridge--respond (session request decision)
  "Send DECISION about SESSION's deferred permission REQUEST."
  (let ((request-id (plist-get request :requestId))
        (answer (if (equal (plist-get decision :behavior) "allow") "allowed" "denied")))
    (claude-bridge-model-forget-permission session request-id answer)
    (claude-bridge-client-call
     "session/respondPermission"
     (list :sessionId (claude-bridge-session-id session) :requestId request-id
           :decision decision)
     :on-error (lambda (err)
                 (claude-bridge-model-forget-permission session request-id "withdrawn")
                 (unless (eql (plist-get err :code) -31010)
                   (message "claude-bridge: answer not taken: %s"
                            (claude-bridge-client-error-message err)))))))

(defun claude-bridge-answer-permission (&optional session)
  "Answer the oldest permission request of SESSION that is still open."
  (interactive)
  (let* ((session (or session (claude-bridge--current-session)))
         (request (car (claude-bridge-session-permissions session))))
    (unless request (user-error "No permission request is waiting"))
    (claude-bridge--ask session request)))

;;;; Drawing

(defun claude-bridge--schedule-redraw (session)
  "Schedule one batched redraw of SESSION's chat buffer."
  (when-let ((buf (claude-bridge--session-buffer session)))
    (with-current-buffer buf
      (unless claude-bridge--timer
        (setq claude-bridge--timer
              (run-at-time claude-bridge-redraw-delay nil
                           #'claude-bridge--flush session))))))

(defun claude-bridge--format-cost (usd)
  "Format USD as a cost."
  (format "$%.4f" (or usd 0)))

;; Text is drawn with both `face' and `font-lock-face': font-lock (on in
;; markdown-mode) removes `face' and shows `font-lock-face' instead.
(defun claude-bridge--render (item)
  "Return the text that draws ITEM (without its trailing newline)."
  (let ((props (claude-bridge-item-props item)))
    (pcase (claude-bridge-item-kind item)
      ('user
       (propertize (concat "\n❯ " (claude-bridge-item-text item)
                           (if (plist-get props :queued) "  (waiting for Claude to start)" ""))
                   'face 'claude-bridge-user-face 'font-lock-face 'claude-bridge-user-face))
      ('text (claude-bridge-model-take-unseen item)
             (concat (claude-bridge-model-item-text item)
                     (if (plist-get props :aborted) " [interrupted]" "")))
      ('thinking
       (claude-bridge-model-take-unseen item)
       (concat (propertize (format "%s Thinking" (if (claude-bridge-item-expanded item) "▾" "▸"))
                           'face 'claude-bridge-section-face 'font-lock-face 'claude-bridge-section-face)
               (if (claude-bridge-item-expanded item)
                   (propertize (concat "\n" (claude-bridge-model-item-text item))
                               'face 'claude-bridge-dim-face 'font-lock-face 'claude-bridge-dim-face)
                 "")))
      ('tool
       (let* ((result (plist-get props :result))
              (status (cond ((null result) " …")
                            ((plist-get props :error) " ✗")
                            (t " ✓"))))
         (concat
          (propertize (format "%s %s%s" (if (claude-bridge-item-expanded item) "▾" "▸")
                              (claude-bridge-item-text item) status)
                      'face 'claude-bridge-section-face 'font-lock-face 'claude-bridge-section-face)
          (when (claude-bridge-item-expanded item)
            (propertize
             (concat "\n  input: " (claude-bridge--json (plist-get props :input))
                     (if result (concat "\n  result:\n" (replace-regexp-in-string
                                                         "^" "    " result))
                       ""))
             'face 'claude-bridge-dim-face 'font-lock-face 'claude-bridge-dim-face)))))
      ('result
       (let ((context (plist-get props :context)))
         (propertize
          (format "── %s%s · %s this turn · %s total%s ──"
                  (if (plist-get props :interrupted) "interrupted · " "")
                  (format "%.1f s" (/ (or (plist-get props :duration) 0) 1000.0))
                  (claude-bridge--format-cost (plist-get props :cost))
                  (claude-bridge--format-cost (plist-get props :total))
                  (if context
                      (format " · context %s/%s tokens (%s%%)"
                              (plist-get context :totalTokens)
                              (plist-get context :maxTokens)
                              (plist-get context :percentage))
                    ""))
          'face 'claude-bridge-dim-face 'font-lock-face 'claude-bridge-dim-face)))
      ('permission
       (let ((answer (plist-get props :answer)))
         (propertize (concat "? " (claude-bridge-item-text item)
                             (if answer (format " — %s" answer)
                               "  [C-c C-p to answer]"))
                     'face 'claude-bridge-notice-face 'font-lock-face 'claude-bridge-notice-face)))
      (_ (propertize (concat "⚠ " (claude-bridge-item-text item))
                     'face 'claude-bridge-notice-face 'font-lock-face 'claude-bridge-notice-face)))))

(defun claude-bridge--json (value)
  "VALUE as compact JSON text."
  (condition-case nil
      (json-serialize (or value claude-bridge-client-empty-object)
                      :null-object nil :false-object :json-false)
    (error (format "%S" value))))

(defun claude-bridge--draw (item)
  "Draw ITEM where it belongs: append, extend or redraw it."
  (let ((start (claude-bridge-item-start item))
        (end (claude-bridge-item-end item))
        (props (claude-bridge-item-props item)))
    (cond
     ((null start)
      (goto-char claude-bridge--insert-marker)
      (let ((beg (point)))
        (insert (claude-bridge--render item) "\n")
        (setf (claude-bridge-item-start item) (copy-marker beg)
              (claude-bridge-item-end item) (copy-marker (1- (point)) t))
        (add-text-properties beg (point) (list 'read-only t 'front-sticky '(read-only) 'claude-bridge-item item))))
     ((and (eq (claude-bridge-item-kind item) 'text)
           (not (plist-get props :redraw))
           (not (plist-get props :aborted)))
      (when (claude-bridge-item-unseen item)
        (let ((beg (marker-position end)))
          ;; Newest chunk first, each at BEG: they end up in order, uncopied.
          (dolist (chunk (claude-bridge-model-mark-seen item))
            (goto-char beg)
            (insert chunk))
          (add-text-properties beg end (list 'read-only t 'front-sticky '(read-only) 'claude-bridge-item item)))))
     ((and (eq (claude-bridge-item-kind item) 'thinking)
           (not (claude-bridge-item-expanded item))
           (not (plist-get props :redraw)))
      (claude-bridge-model-take-unseen item))
     (t
      (claude-bridge-model-put item :redraw nil)
      (goto-char start)
      (delete-region start end)
      (insert (claude-bridge--render item))
      (set-marker end (point))
      (add-text-properties start end (list 'read-only t 'front-sticky '(read-only) 'claude-bridge-item item))))))

(defun claude-bridge--flush (session)
  "Draw every change of SESSION into its chat buffer now."
  (when-let ((buf (claude-bridge--session-buffer session)))
    (with-current-buffer buf
      (when (timerp claude-bridge--timer) (cancel-timer claude-bridge--timer))
      (setq claude-bridge--timer nil)
      (let ((dirty (nreverse (claude-bridge-session-dirty session)))
            (inhibit-read-only t))
        (setf (claude-bridge-session-dirty session) nil)
        (save-excursion
          (dolist (item dirty) (claude-bridge--draw item)))
        (set-buffer-modified-p nil))
      (force-mode-line-update))))

(defun claude-bridge--setup-drawing ()
  "Insert the prompt line into the empty chat buffer and set the markers."
  (let ((inhibit-read-only t))
    (erase-buffer)
    (setq claude-bridge--insert-marker (copy-marker (point-min) t))
    (insert (propertize (substitute-command-keys
                         (concat "\n── \\[claude-bridge-send] send · \\[claude-bridge-interrupt] \
interrupt · \\[claude-bridge-answer-permission] answer · TAB fold ──"))
                        'read-only t 'front-sticky t 'face 'claude-bridge-dim-face 'font-lock-face 'claude-bridge-dim-face)
            ;; Not read-only, so that typing after it works: a `rear-nonsticky'
            ;; property would not do, markdown-mode's font-lock strips it.
            "\n")
    (setq claude-bridge--prompt-marker (point-max-marker))
    (set-marker claude-bridge--insert-marker (point-min))))

(defun claude-bridge-toggle-section ()
  "Show or hide the body of the tool call or thinking at point."
  (interactive)
  (let ((item (get-text-property (point) 'claude-bridge-item)))
    (unless (and item (memq (claude-bridge-item-kind item) '(tool thinking)))
      (if (>= (point) claude-bridge--prompt-marker)
          (user-error "TAB folds the tool call or thinking at point")
        (user-error "No tool call or thinking here")))
    (setf (claude-bridge-item-expanded item) (not (claude-bridge-item-expanded item)))
    (claude-bridge-model-put item :redraw t)
    (let ((inhibit-read-only t))
      (save-excursion (claude-bridge--draw item)))))

;;;; Mode

(defun claude-bridge-lighter ()
  "The mode-line text of this chat: model, state and session cost."
  (when-let ((s claude-bridge--session))
    (format " [%s|%s|%s%s]"
            (or (claude-bridge-session-model s) "default")
            (claude-bridge-session-state s)
            (claude-bridge--format-cost (claude-bridge-session-total-cost s))
            (let ((n (length (claude-bridge-session-permissions s))))
              (if (> n 0) (format "|%d waiting" n) "")))))

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
    (define-key map (kbd "TAB") #'claude-bridge-toggle-section)
    map)
  "Keymap of `claude-bridge-chat-mode'.")

(defalias 'claude-bridge--parent-mode
  (if (fboundp 'markdown-mode) 'markdown-mode 'text-mode))

(define-derived-mode claude-bridge-chat-mode claude-bridge--parent-mode "Claude"
  "Major mode of a Claude chat buffer.
Type after the line at the bottom; \\[claude-bridge-send] sends.
\\{claude-bridge-chat-mode-map}"
  (setq-local mode-line-process '(:eval (claude-bridge-lighter)))
  (setq-local buffer-undo-list t)
  (setq-local truncate-lines nil)
  (setq-local word-wrap t)
  ;; Long replies redisplay much faster without bidirectional reordering.
  (setq-local bidi-paragraph-direction 'left-to-right)
  (setq-local bidi-inhibit-bpa t)
  (claude-bridge--setup-drawing)
  (add-hook 'kill-buffer-hook #'claude-bridge--kill-buffer nil t))

(defun claude-bridge--kill-buffer ()
  "Close the session of the chat buffer being killed."
  (when-let ((session claude-bridge--session))
    (when (timerp claude-bridge--timer) (cancel-timer claude-bridge--timer))
    (when (and (claude-bridge--live-p session) (claude-bridge-client-live-p))
      (claude-bridge-close session))
    (setf (claude-bridge-session-state session) 'closed)))

(defun claude-bridge-doctor ()
  "Check the bridge and the CLI: run `claude-bridge doctor' and show its report.
The report says which CLI was found, its version, and whether a
session starts."
  (interactive)
  (let* ((serve (cl-position "serve" claude-bridge-command :test #'equal))
         (command (append (cl-subseq claude-bridge-command 0 serve)
                          '("doctor")
                          (let ((path (member "--claude-path" claude-bridge-command)))
                            (and path (cadr path) (list "--claude-path" (cadr path))))))
         (buf (get-buffer-create "*claude-bridge doctor*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "$ %s\n\n" (mapconcat #'shell-quote-argument command " "))))
      (special-mode))
    (make-process :name "claude-bridge-doctor" :buffer buf :command command
                  :connection-type 'pipe :noquery t
                  :sentinel (lambda (proc _event)
                              (unless (process-live-p proc)
                                (message "claude-bridge doctor: %s"
                                         (if (zerop (process-exit-status proc))
                                             "all good" "problems found, see its buffer")))))
    (display-buffer buf)
    buf))

(defun claude-bridge-shutdown ()
  "Stop the bridge and every Claude process of it."
  (interactive)
  (claude-bridge-client-shutdown))

(add-hook 'kill-emacs-hook #'claude-bridge-shutdown)

(provide 'claude-bridge)
;;; claude-bridge.el ends here
